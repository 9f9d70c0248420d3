#include "checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <tuple>

#include "durable_file.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormatName = "orchestrate-checkpoint";
constexpr const char* kStagingPrefix = ".staging-";
constexpr const char* kReplacedSuffix = ".replaced";

json to_json(const CheckpointMeta& m) {
  return json{{"format", kFormatName},
              {"format_version", m.format_version},
              {"orchestrate_version", m.orchestrate_version},
              {"run_id", m.run_id},
              {"step", m.step},
              {"micro_batch", m.micro_batch},
              {"epoch", m.epoch},
              {"evaluated_at_step", m.evaluated_at_step},
              {"reason", m.reason},
              {"created_at", m.created_at},
              {"run_name", m.run_name},
              {"model", m.model},
              {"input_shape", m.input_shape},
              {"num_classes", m.num_classes},
              {"class_names", m.class_names},
              {"world_size", m.world_size},
              {"metrics", m.metrics},
              {"recipe_params", m.recipe_params},
              {"file_bytes", m.file_bytes}};
}

CheckpointMeta meta_from_json(const json& j) {
  CheckpointMeta m;
  m.format_version = j.at("format_version").get<int>();
  m.orchestrate_version = j.at("orchestrate_version").get<std::string>();
  m.run_id = j.at("run_id").get<std::int64_t>();
  m.step = j.at("step").get<std::int64_t>();
  m.micro_batch = j.at("micro_batch").get<std::int64_t>();
  m.epoch = j.at("epoch").get<std::int64_t>();
  m.evaluated_at_step = j.at("evaluated_at_step").get<std::int64_t>();
  m.reason = j.at("reason").get<std::string>();
  m.created_at = j.at("created_at").get<std::string>();
  m.run_name = j.value("run_name", std::string());
  m.model = j.at("model").get<std::string>();
  m.input_shape = j.value("input_shape", std::vector<std::int64_t>{});
  m.num_classes = j.value("num_classes", std::int64_t{0});
  m.class_names = j.value("class_names", std::vector<std::string>{});
  m.world_size = j.value("world_size", 1);
  m.metrics = j.at("metrics").get<std::map<std::string, double>>();
  m.recipe_params = j.at("recipe_params").get<std::map<std::string, std::string>>();
  m.file_bytes = j.at("file_bytes").get<std::map<std::string, std::int64_t>>();
  return m;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// (step, micro_batch) of a checkpoint directory name, or nullopt.
std::optional<std::pair<std::int64_t, std::int64_t>> position_of(const std::string& name) {
  static const std::regex pattern(R"(step-(\d+)(?:\+(\d+))?)");
  std::smatch match;
  if (!std::regex_match(name, match, pattern)) return std::nullopt;
  return std::make_pair(std::stoll(match[1].str()), match[2].matched ? std::stoll(match[2].str()) : 0);
}

}  // namespace

std::string checkpoint_name(std::int64_t step, std::int64_t micro_batch) {
  char name[64];
  std::snprintf(name, sizeof name, "step-%08lld", static_cast<long long>(step));
  std::string out = name;
  if (micro_batch > 0) out += "+" + std::to_string(micro_batch);
  return out;
}

WrittenCheckpoint write_checkpoint(const std::string& directory, CheckpointContent content) {
  const std::string name = checkpoint_name(content.meta.step, content.meta.micro_batch);
  const fs::path final_path = fs::path(directory) / name;
  const fs::path staged = fs::path(directory) / (kStagingPrefix + name + "-" + std::to_string(::getpid()));
  std::error_code ignored;
  fs::remove_all(staged, ignored);
  fs::create_directories(staged);
  try {
    write_safetensors((staged / kWeightsFile).string(), content.weights);
    write_file_durably((staged / kTrainerStateFile).string(), content.trainer_state);
    write_file_durably((staged / kRecipeFile).string(), content.recipe_toml);
    auto& sizes = content.meta.file_bytes;
    sizes.clear();
    for (const char* file : {kWeightsFile, kTrainerStateFile, kRecipeFile})
      sizes[file] = static_cast<std::int64_t>(fs::file_size(staged / file));
    // Written last: its presence and sizes vouch for the files beside it.
    write_file_durably((staged / kMetaFile).string(), to_json(content.meta).dump(2) + "\n");
    publish_directory(staged.string(), final_path.string());
  } catch (...) {
    fs::remove_all(staged, ignored);
    throw;
  }
  WrittenCheckpoint written{final_path.string(), 0};
  for (const auto& entry : fs::directory_iterator(final_path))
    written.bytes += static_cast<std::int64_t>(entry.file_size());
  return written;
}

bool is_checkpoint(const std::string& path) {
  std::error_code error;
  return fs::is_directory(path, error) && fs::is_regular_file(fs::path(path) / kMetaFile, error);
}

CheckpointMeta read_checkpoint_meta(const std::string& path) {
  std::error_code error;
  if (!fs::exists(path, error))
    throw Error("checkpoint " + path + " does not exist; `orchestrate checkpoints RUN` lists a run's checkpoints");
  if (!is_checkpoint(path))
    throw Error(path + " is not an orchestrate checkpoint (no " + kMetaFile +
                " in it); give a checkpoint directory such as .../step-00000300");
  const fs::path meta_path = fs::path(path) / kMetaFile;
  CheckpointMeta meta;
  try {
    const json j = json::parse(read_text(meta_path));
    if (j.value("format", "") != kFormatName)
      throw Error(meta_path.string() + " is not an orchestrate checkpoint description (format is not \"" +
                  kFormatName + "\")");
    const int version = j.at("format_version").get<int>();
    if (version > kCheckpointFormatVersion)
      throw Error("checkpoint " + path + " has format version " + std::to_string(version) + ", written by orchestrate " +
                  j.value("orchestrate_version", std::string("?")) + "; this orchestrate reads version " +
                  std::to_string(kCheckpointFormatVersion) + " and older: use a newer orchestrate");
    meta = meta_from_json(j);
  } catch (const json::exception& e) {
    throw Error("checkpoint " + path + ": " + kMetaFile + " is damaged (" + e.what() +
                "); use an older checkpoint of the run");
  }
  for (const auto& [file, bytes] : meta.file_bytes) {
    const fs::path file_path = fs::path(path) / file;
    if (!fs::exists(file_path, error))
      throw Error("checkpoint " + path + " is incomplete: " + file + " is missing; use an older checkpoint of the run");
    const auto actual = static_cast<std::int64_t>(fs::file_size(file_path, error));
    if (actual != bytes)
      throw Error("checkpoint " + path + " is damaged: " + file + " has " + std::to_string(actual) +
                  " bytes, it was written with " + std::to_string(bytes) + " (truncated copy?); use an older checkpoint");
  }
  return meta;
}

std::vector<std::string> checkpoints_in(const std::string& directory) {
  std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> found;
  std::error_code error;
  if (!fs::is_directory(directory, error)) return {};
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const auto position = position_of(entry.path().filename().string());
    if (position && is_checkpoint(entry.path().string()))
      found.emplace_back(position->first, position->second, entry.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [step, micro, path] : found) out.push_back(std::move(path));
  return out;
}

void remove_checkpoint(const std::string& path) {
  std::error_code error;
  fs::remove_all(path, error);
  if (error) throw Error("cannot remove old checkpoint " + path + ": " + error.message());
  sync_directory(fs::path(path).parent_path().string());
}

void remove_stale_staging(const std::string& directory) {
  std::error_code error;
  if (!fs::is_directory(directory, error)) return;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kStagingPrefix, 0) == 0) {
      fs::remove_all(entry.path(), error);
    } else if (name.size() > std::string(kReplacedSuffix).size() && name.ends_with(kReplacedSuffix)) {
      // A crash between the two renames of publish_directory: keep whichever
      // copy holds the name; restore the old one if the new never landed.
      const fs::path original = entry.path().parent_path() / name.substr(0, name.size() - std::string(kReplacedSuffix).size());
      if (fs::exists(original, error)) fs::remove_all(entry.path(), error);
      else fs::rename(entry.path(), original, error);
    }
  }
}

}  // namespace orchestrate

#include "checkpoint/checkpoint_meta.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <regex>

#include "limits/nesting_check.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormatName = "orchestrate-checkpoint";

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
              {"updates_per_epoch", m.updates_per_epoch},
              {"metrics", m.metrics},
              {"recipe_params", m.recipe_params},
              {"file_bytes", m.file_bytes},
              {"file_crc32c", m.file_crc32c}};
}

// An integer field as the JSON holds it: nlohmann would convert a float such
// as 7.6e43 to int64 with a plain cast (undefined behaviour, found by
// fuzzing), so anything but an integer in range is refused here.
std::int64_t integer(const json& value, const std::string& key) {
  const bool in_range = value.is_number_integer() && !(value.is_number_unsigned() &&
                                                       value.get<std::uint64_t>() > std::numeric_limits<std::int64_t>::max());
  if (!in_range) throw DataError(key + " is not an integer (" + value.dump().substr(0, 40) + ")");
  return value.get<std::int64_t>();
}

std::int64_t integer_at(const json& j, const std::string& key) { return integer(j.at(key), key); }

std::int64_t integer_or(const json& j, const std::string& key, std::int64_t fallback) {
  return j.contains(key) ? integer(j.at(key), key) : fallback;
}

int small_integer_at(const json& j, const std::string& key, std::int64_t fallback) {
  const std::int64_t value = integer_or(j, key, fallback);
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
    throw DataError(key + " " + std::to_string(value) + " is out of range");
  return static_cast<int>(value);
}

CheckpointMeta meta_from_json(const json& j) {
  CheckpointMeta m;
  m.format_version = small_integer_at(j, "format_version", 0);
  m.orchestrate_version = j.at("orchestrate_version").get<std::string>();
  m.run_id = integer_at(j, "run_id");
  m.step = integer_at(j, "step");
  m.micro_batch = integer_at(j, "micro_batch");
  m.epoch = integer_at(j, "epoch");
  m.evaluated_at_step = integer_at(j, "evaluated_at_step");
  m.reason = j.at("reason").get<std::string>();
  m.created_at = j.at("created_at").get<std::string>();
  m.run_name = j.value("run_name", std::string());
  m.model = j.at("model").get<std::string>();
  if (j.contains("input_shape"))
    for (const auto& side : j.at("input_shape")) m.input_shape.push_back(integer(side, "input_shape"));
  m.num_classes = integer_or(j, "num_classes", 0);
  m.class_names = j.value("class_names", std::vector<std::string>{});
  m.world_size = small_integer_at(j, "world_size", 1);
  m.updates_per_epoch = integer_or(j, "updates_per_epoch", 0);
  m.metrics = j.at("metrics").get<std::map<std::string, double>>();
  m.recipe_params = j.at("recipe_params").get<std::map<std::string, std::string>>();
  for (const auto& [file, bytes] : j.at("file_bytes").items()) m.file_bytes[file] = integer(bytes, "file_bytes of " + file);
  if (j.contains("file_crc32c"))
    for (const auto& [file, crc] : j.at("file_crc32c").items()) {
      const std::int64_t value = integer(crc, "file_crc32c of " + file);
      if (value < 0 || value > std::numeric_limits<std::uint32_t>::max())
        throw DataError("file_crc32c of " + file + " " + std::to_string(value) + " is not a CRC-32C (0 to 2^32 - 1)");
      m.file_crc32c[file] = static_cast<std::uint32_t>(value);
    }
  return m;
}

std::string dimensions_text(const std::vector<std::int64_t>& sizes) {
  std::string out = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

// A checkpoint.json may have been edited or damaged: every field the trainer
// indexes or allocates with is checked against what write_checkpoint writes.
void check_meta(const CheckpointMeta& m, const std::string& directory) {
  const auto refuse = [&](const std::string& problem) {
    throw Error("checkpoint " + directory + ": " + kMetaFile + " is damaged (" + problem +
                "); use an older checkpoint of the run");
  };
  if (m.format_version < 1) refuse("format_version " + std::to_string(m.format_version) + " is not 1 or more");
  if (m.step < 0) refuse("step " + std::to_string(m.step) + " is negative");
  if (m.micro_batch < 0) refuse("micro_batch " + std::to_string(m.micro_batch) + " is negative");
  if (m.epoch < 0) refuse("epoch " + std::to_string(m.epoch) + " is negative");
  if (m.evaluated_at_step < -1 || m.evaluated_at_step > m.step)
    refuse("evaluated_at_step " + std::to_string(m.evaluated_at_step) + " is outside -1.." + std::to_string(m.step));
  if (m.world_size < 1) refuse("world_size " + std::to_string(m.world_size) + " is not 1 or more");
  if (m.updates_per_epoch < 0) refuse("updates_per_epoch " + std::to_string(m.updates_per_epoch) + " is negative");
  if (m.num_classes < 0) refuse("num_classes " + std::to_string(m.num_classes) + " is negative");
  if (!m.input_shape.empty() &&
      (m.input_shape.size() != 3 || std::any_of(m.input_shape.begin(), m.input_shape.end(), [](auto d) { return d < 1; })))
    refuse("input_shape " + dimensions_text(m.input_shape) + " is not [channels, height, width] of positive sizes");
  for (const auto& [file, bytes] : m.file_bytes) {
    if (file != kWeightsFile && file != kTrainerStateFile && file != kRecipeFile)
      refuse("file_bytes names '" + file + "', which is not a checkpoint file");  // never a path out of the directory
    if (bytes < 0) refuse("file_bytes of " + file + " is negative");
  }
  for (const auto& [file, crc] : m.file_crc32c)
    if (!m.file_bytes.count(file)) refuse("file_crc32c names '" + file + "', which file_bytes does not list");
  if (!m.file_bytes.count(kWeightsFile) || !m.file_bytes.count(kTrainerStateFile))
    refuse("file_bytes does not list " + std::string(kWeightsFile) + " and " + kTrainerStateFile);
  // The directory's name is the position (checkpoint_name): a step edited in
  // one place only is a tampered checkpoint.
  const std::string name = fs::path(directory).filename().string();
  if (const auto position = checkpoint_position(name); position && *position != std::make_pair(m.step, m.micro_batch))
    refuse("step " + std::to_string(m.step) + (m.micro_batch ? "+" + std::to_string(m.micro_batch) : "") +
           " does not match the directory's name " + name);
}

}  // namespace

std::string checkpoint_name(std::int64_t step, std::int64_t micro_batch) {
  char name[64];
  std::snprintf(name, sizeof name, "step-%08lld", static_cast<long long>(step));
  std::string out = name;
  if (micro_batch > 0) out += "+" + std::to_string(micro_batch);
  return out;
}

// A number too large for int64 is no checkpoint's (std::stoll threw, and a
// save failed with the bare message "stoll").
std::optional<std::pair<std::int64_t, std::int64_t>> checkpoint_position(const std::string& name) {
  static const std::regex pattern(R"(step-(\d+)(?:\+(\d+))?)");
  std::smatch match;
  if (!std::regex_match(name, match, pattern)) return std::nullopt;
  const auto number = [](const std::ssub_match& digits) -> std::optional<std::int64_t> {
    std::int64_t value = 0;
    const std::string text = digits.str();
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
  };
  const auto step = number(match[1]);
  const auto micro = match[2].matched ? number(match[2]) : std::optional<std::int64_t>(0);
  if (!step || !micro) return std::nullopt;
  return std::make_pair(*step, *micro);
}

std::string checkpoint_meta_json(const CheckpointMeta& meta) { return to_json(meta).dump(2) + "\n"; }

CheckpointMeta parse_checkpoint_meta(std::string_view text, const std::string& directory) {
  const std::string meta_path = (fs::path(directory) / kMetaFile).string();
  const auto damaged = [&](const std::string& why) {
    return Error("checkpoint " + directory + ": " + kMetaFile + " is damaged (" + why +
                 "); use an older checkpoint of the run");
  };
  CheckpointMeta meta;
  try {
    check_json_nesting(text, meta_path);
    const json j = json::parse(text);
    if (!j.is_object()) throw damaged("not a JSON object");
    if (j.value("format", "") != kFormatName)
      throw Error(meta_path + " is not an orchestrate checkpoint description (format is not \"" + kFormatName + "\")");
    const int version = small_integer_at(j, "format_version", 0);
    if (version > kCheckpointFormatVersion)
      throw Error("checkpoint " + directory + " has format version " + std::to_string(version) +
                  ", written by orchestrate " + j.value("orchestrate_version", std::string("?")) +
                  "; this orchestrate reads version " + std::to_string(kCheckpointFormatVersion) +
                  " and older: use a newer orchestrate");
    meta = meta_from_json(j);
  } catch (const json::exception& e) {
    std::string reason = e.what();  // may quote the bytes it stopped at: keep the message on one line
    std::replace_if(reason.begin(), reason.end(), [](unsigned char c) { return c < 0x20; }, ' ');
    throw damaged(reason);
  } catch (const DataError& e) {  // nested too deep
    throw damaged(e.what());
  }
  check_meta(meta, directory);
  return meta;
}

}  // namespace orchestrate

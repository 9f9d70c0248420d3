#include "checkpoint/checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>
#include <vector>

#include "checkpoint/durable_file.h"
#include "orchestrate/error.h"
#include "tfrecord/crc32c.h"

namespace orchestrate {

namespace fs = std::filesystem;

namespace {

constexpr const char* kStagingPrefix = ".staging-";
constexpr const char* kReplacedSuffix = ".replaced";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Read in pieces: a checkpoint's files can be larger than memory should hold twice.
std::uint32_t crc32c_of_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path.string());
  std::vector<char> buffer(1 << 20);
  std::uint32_t crc = 0;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    crc = tfrecord::crc32c_extend(crc, buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw Error("cannot read " + path.string());
  return crc;
}

}  // namespace

WrittenCheckpoint write_checkpoint(const std::string& directory, CheckpointContent content,
                                   const BeforePublish& before_publish) {
  const std::string name = checkpoint_name(content.meta.step, content.meta.micro_batch);
  const fs::path final_path = fs::path(directory) / name;
  const fs::path staged = fs::path(directory) / (kStagingPrefix + name + "-" + std::to_string(::getpid()));
  std::error_code ignored;
  fs::remove_all(staged, ignored);
  fs::create_directories(staged);
  WrittenCheckpoint written{final_path.string(), 0};
  try {
    write_safetensors((staged / kWeightsFile).string(), content.weights);
    write_file_durably((staged / kTrainerStateFile).string(), content.trainer_state);
    write_file_durably((staged / kRecipeFile).string(), content.recipe_toml);
    auto& sizes = content.meta.file_bytes;
    auto& crcs = content.meta.file_crc32c;
    sizes.clear();
    crcs.clear();
    for (const char* file : {kWeightsFile, kTrainerStateFile, kRecipeFile}) {
      sizes[file] = static_cast<std::int64_t>(fs::file_size(staged / file));
      crcs[file] = crc32c_of_file(staged / file);
    }
    // Written last: its presence, sizes and CRCs vouch for the files beside it.
    write_file_durably((staged / kMetaFile).string(), checkpoint_meta_json(content.meta));
    for (const auto& entry : fs::directory_iterator(staged))
      written.bytes += static_cast<std::int64_t>(entry.file_size());
    if (before_publish) before_publish(written);
    publish_directory(staged.string(), final_path.string());
  } catch (...) {
    fs::remove_all(staged, ignored);
    throw;
  }
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
  const fs::path directory =
      fs::path(path).filename().empty() ? fs::path(path).parent_path() : fs::path(path);  // ".../step-6/"
  const CheckpointMeta meta = parse_checkpoint_meta(read_text(directory / kMetaFile), directory.string());
  for (const auto& [file, bytes] : meta.file_bytes) {
    const fs::path file_path = fs::path(path) / file;
    if (!fs::exists(file_path, error))
      throw Error("checkpoint " + path + " is incomplete: " + file + " is missing; use an older checkpoint of the run");
    const auto actual = static_cast<std::int64_t>(fs::file_size(file_path, error));
    if (actual != bytes)
      throw Error("checkpoint " + path + " is damaged: " + file + " has " + std::to_string(actual) +
                  " bytes, it was written with " + std::to_string(bytes) + " (truncated copy?); use an older checkpoint");
  }
  for (const auto& [file, written] : meta.file_crc32c)
    if (const std::uint32_t now = crc32c_of_file(fs::path(path) / file); now != written)
      throw Error("checkpoint " + path + " is damaged: " + file + "'s CRC-32C is " + tfrecord::crc_text(now) +
                  ", it was written with " + tfrecord::crc_text(written) +
                  " (a flipped bit on the disk, or an altered file); use an older checkpoint");
  return meta;
}

std::vector<std::string> checkpoints_in(const std::string& directory) {
  std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> found;
  std::error_code error;
  if (!fs::is_directory(directory, error)) return {};
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const auto position = checkpoint_position(entry.path().filename().string());
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

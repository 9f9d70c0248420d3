#include "export/model_repository.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <system_error>

#include "checkpoint/durable_file.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string labels_text(const std::vector<std::string>& labels) {
  std::string text;
  for (const auto& label : labels) text += label + "\n";
  return text;
}

// A model-level file that older versions depend on: written when new,
// otherwise it must already say the same.
void write_or_require_same(const fs::path& path, const std::string& text) {
  if (fs::exists(path)) {
    if (read_text(path) == text) return;
    throw UsageError(path.string() + " describes another model (input size, classes, labels or top-k differ) than this "
                     "export; its versions would no longer match it. Export under another name (--name) or remove " +
                     path.parent_path().string());
  }
  write_file_durably(path.string(), text);
}

}  // namespace

std::string triton_config_text(const std::string& model_name, const ServingSignature& s) {
  const std::int64_t k = std::min(s.top_k, s.num_classes);
  std::ostringstream out;
  out << "# Triton Inference Server model configuration (PyTorch backend), written by orchestrate.\n"
      << "# Outputs follow the backend's <name>__<index> convention for the positions of model.pt's result tuple.\n"
      << "name: \"" << model_name << "\"\n"
      << "platform: \"pytorch_libtorch\"\n"
      << "max_batch_size: " << s.max_batch_size << "\n"
      << "# Requests queued together are run as one batch of up to max_batch_size; a request waits at most\n"
      << "# 100 microseconds for others to join it (Triton's example value; 0 would batch only what is queued).\n"
      << "dynamic_batching {\n"
      << "  max_queue_delay_microseconds: 100\n"
      << "}\n"
      << "input [\n"
      << "  {\n"
      << "    name: \"images__0\"\n"
      << "    data_type: TYPE_FP32\n"
      << "    format: FORMAT_NCHW\n"
      << "    dims: [ " << s.channels << ", " << s.height << ", " << s.width << " ]\n"
      << "  }\n"
      << "]\n"
      << "output [\n"
      << "  {\n"
      << "    name: \"logits__0\"\n"
      << "    data_type: TYPE_FP32\n"
      << "    dims: [ " << s.num_classes << " ]\n"
      << "    label_filename: \"labels.txt\"\n"
      << "  },\n"
      << "  {\n"
      << "    name: \"topk_indices__1\"\n"
      << "    data_type: TYPE_INT64\n"
      << "    dims: [ " << k << " ]\n"
      << "  },\n"
      << "  {\n"
      << "    name: \"topk_confidences__2\"\n"
      << "    data_type: TYPE_FP32\n"
      << "    dims: [ " << k << " ]\n"
      << "  }\n"
      << "]\n";
  return out.str();
}

std::vector<std::int64_t> model_versions(const std::string& model_dir) {
  std::vector<std::int64_t> versions;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(model_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && !name.empty() && name.size() < 18 &&
        std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      versions.push_back(std::stoll(name));
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

ExportedVersion write_model_version(const std::string& repository, const ServingExport& spec,
                                    torch::jit::Module& module) {
  static const std::regex valid_name("[A-Za-z0-9_.-]+");
  if (!std::regex_match(spec.model_name, valid_name) || spec.model_name == "." || spec.model_name == "..")
    throw UsageError("model name '" + spec.model_name +
                     "' is not a directory name a server accepts; use letters, digits, '_', '-' and '.'");
  if (static_cast<std::int64_t>(spec.labels.size()) != spec.signature.num_classes)
    throw Error("export of " + spec.model_name + ": " + std::to_string(spec.labels.size()) + " labels for " +
                std::to_string(spec.signature.num_classes) + " classes (a bug)");
  const fs::path model_dir = fs::path(repository) / spec.model_name;
  require_writable_directory(model_dir.string(), "the export directory");
  write_or_require_same(model_dir / "config.pbtxt", triton_config_text(spec.model_name, spec.signature));
  write_or_require_same(model_dir / "labels.txt", labels_text(spec.labels));

  // Staged in full, then renamed to the next free number. rename(2) onto an
  // existing non-empty directory fails, so two exports racing for the same
  // number cannot overwrite each other: the loser takes the next one.
  const fs::path staged = model_dir / (".staging-" + std::to_string(::getpid()));
  fs::remove_all(staged);
  fs::create_directories(staged);
  std::ostringstream archive;
  module.save(archive);
  write_file_durably((staged / "model.pt").string(), archive.str());
  write_file_durably((staged / "preprocessing.json").string(), to_json_text(spec.preprocessing));
  write_file_durably((staged / "labels.txt").string(), labels_text(spec.labels));
  nlohmann::ordered_json provenance(spec.provenance);
  write_file_durably((staged / "export.json").string(), provenance.dump(2) + "\n");
  sync_directory(staged.string());
  for (int attempt = 0; attempt < 100; ++attempt) {
    const auto existing = model_versions(model_dir.string());
    const std::int64_t version = existing.empty() ? 1 : existing.back() + 1;
    const fs::path final_dir = model_dir / std::to_string(version);
    std::error_code error;
    fs::rename(staged, final_dir, error);
    if (!error) {
      sync_directory(model_dir.string());
      return {model_dir.string(), version, final_dir.string()};
    }
    if (error != std::errc::directory_not_empty && error != std::errc::file_exists) {
      fs::remove_all(staged);
      throw Error("cannot publish " + final_dir.string() + ": " + error.message());
    }
  }
  fs::remove_all(staged);
  throw Error("cannot find a free version number under " + model_dir.string() + " (another export keeps taking it)");
}

}  // namespace orchestrate

// A model-repository entry in the layout of NVIDIA Triton's PyTorch backend
// (what TorchServe-era and Triton servers load as-is):
//
//   <repository>/<model_name>/config.pbtxt      the model's signature
//   <repository>/<model_name>/labels.txt        class names, one per line
//   <repository>/<model_name>/<version>/model.pt          TorchScript module
//   <repository>/<model_name>/<version>/preprocessing.json
//   <repository>/<model_name>/<version>/labels.txt        (a version stands alone)
//   <repository>/<model_name>/<version>/export.json       where it came from
//
// Versions are 1, 2, 3...: each export takes the next number (MoXing's
// self-incrementing export version), published by one rename so a server
// polling the repository never sees half a version.
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "export/preprocessing_spec.h"

namespace orchestrate {

struct ServingSignature {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t num_classes = 0;
  std::int64_t top_k = 5;             // capped at num_classes
  std::int64_t max_batch_size = 64;   // Triton's dynamic batch dimension bound
};

// config.pbtxt: the protobuf text format of Triton's ModelConfig message.
std::string triton_config_text(const std::string& model_name, const ServingSignature& signature);

struct ServingExport {
  std::string model_name;  // the directory under the repository: [A-Za-z0-9_.-]+
  ServingSignature signature;
  std::vector<std::string> labels;  // num_classes names
  PreprocessingSpec preprocessing;
  std::map<std::string, std::string> provenance;  // run id, checkpoint, step, metrics... (export.json)
};

struct ExportedVersion {
  std::string model_dir;    // <repository>/<model_name>
  std::int64_t version = 0;
  std::string version_dir;  // <model_dir>/<version>
};

// The version numbers present under `model_dir`, ascending.
std::vector<std::int64_t> model_versions(const std::string& model_dir);

// Writes the next version of `spec.model_name` under `repository`. An entry
// whose config.pbtxt or labels differ (another signature under the same
// name) is refused: its older versions would no longer match the config.
ExportedVersion write_model_version(const std::string& repository, const ServingExport& spec,
                                    torch::jit::Module& module);

}  // namespace orchestrate

#include "engine/dim_reduce/weight_snapshots.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "checkpoint/safetensors.h"
#include "orchestrate/error.h"

namespace orchestrate {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "step-";
constexpr const char* kSuffix = ".safetensors";

// step-00000123.safetensors: zero-padded, so the names sort as the steps do.
std::string snapshot_name(std::int64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "%s%08lld%s", kPrefix, static_cast<long long>(step), kSuffix);
  return name;
}

}  // namespace

WeightSnapshots::WeightSnapshots(SnapshotPolicy policy, std::string directory)
    : policy_(policy), directory_(std::move(directory)) {}

bool WeightSnapshots::due_after_update(std::int64_t step, std::int64_t epoch) const {
  return policy_.every_steps > 0 && epoch >= policy_.from_epoch && step % policy_.every_steps == 0;
}

bool WeightSnapshots::due_after_epoch(std::int64_t epoch) const {
  return policy_.every_epochs > 0 && epoch >= policy_.from_epoch && epoch % policy_.every_epochs == 0;
}

std::string WeightSnapshots::save(const NamedParameters& parameters, std::int64_t step, std::int64_t epoch) {
  const std::string path = (fs::path(directory_) / snapshot_name(step)).string();
  if (step == last_step_) return path;  // an epoch's end that is also an every_steps step
  fs::create_directories(directory_);
  NamedTensors content;
  for (const auto& [name, tensor] : parameters) content.tensors.emplace_back(name, tensor.detach());
  content.metadata = {{"step", std::to_string(step)}, {"epoch", std::to_string(epoch)},
                      {"format", "orchestrate weight snapshot"}};
  write_safetensors(path, content);
  last_step_ = step;
  if (policy_.keep > 0) {
    auto files = snapshot_files(directory_);
    for (std::size_t i = 0; i + static_cast<std::size_t>(policy_.keep) < files.size(); ++i) fs::remove(files[i]);
  }
  return path;
}

std::vector<std::string> snapshot_files(const std::string& directory) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kPrefix, 0) == 0 && entry.path().extension() == kSuffix) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

at::Tensor read_trajectory(const std::string& directory, const NamedParameters& parameters) {
  if (!fs::is_directory(directory))
    throw DataError("[dim_reduce] snapshots = \"" + directory + "\": no such directory; give the directory where "
                    "stage 1 saved its weight snapshots ([snapshots] dir, by default snapshots/<store file>/run-<id> beside the run store)");
  const auto files = snapshot_files(directory);
  if (files.empty())
    throw DataError("[dim_reduce] snapshots = \"" + directory + "\": no step-*.safetensors snapshots in it; run stage 1 "
                    "with [snapshots] every_epochs or every_steps set");
  std::int64_t n = 0;
  for (const auto& [name, tensor] : parameters) n += tensor.numel();
  auto trajectory = at::empty({static_cast<std::int64_t>(files.size()), n}, at::kFloat);
  for (std::size_t row = 0; row < files.size(); ++row) {
    std::map<std::string, at::Tensor> by_name;
    for (auto& [name, tensor] : read_safetensors(files[row]).tensors) by_name[name] = std::move(tensor);
    std::int64_t offset = 0;
    for (const auto& [name, parameter] : parameters) {
      const auto found = by_name.find(name);
      if (found == by_name.end())
        throw DataError(files[row] + ": no tensor '" + name + "'; the snapshots were saved from another model or "
                        "with other trainable parameters than stage 2 trains ([checkpoint] trainable/frozen)");
      if (found->second.sizes() != parameter.sizes())
        throw DataError(files[row] + ": '" + name + "' is " + shape_text(found->second.sizes()) + ", the model's is " +
                        shape_text(parameter.sizes()) + "; the snapshots were saved from another model");
      trajectory[static_cast<std::int64_t>(row)].narrow(0, offset, parameter.numel()).copy_(found->second.reshape({-1}));
      offset += parameter.numel();
    }
  }
  return trajectory;
}

}  // namespace orchestrate

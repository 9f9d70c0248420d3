// Stage 1 of dimension-reduce training: weight-only snapshots of the
// trainable parameters along the way (the seed's second ModelCheckpoint,
// "saved_network", keep 40), apart from the full checkpoints, for stage 2's
// PCA of the trajectory.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/dim_reduce/dim_reduce_settings.h"

namespace orchestrate {

using NamedParameters = std::vector<std::pair<std::string, at::Tensor>>;

class WeightSnapshots {
 public:
  WeightSnapshots(SnapshotPolicy policy, std::string directory);

  // After update `step` (1-based) of (1-based) epoch `epoch`.
  bool due_after_update(std::int64_t step, std::int64_t epoch) const;
  // After (1-based) epoch `epoch` ends.
  bool due_after_epoch(std::int64_t epoch) const;

  // Writes <directory>/step-<step>.safetensors (the parameters by name, and
  // the step and epoch as metadata), then deletes the oldest past `keep`.
  // Returns the path.
  std::string save(const NamedParameters& parameters, std::int64_t step, std::int64_t epoch);

 private:
  SnapshotPolicy policy_;
  std::string directory_;
  std::int64_t last_step_ = -1;
};

// The snapshots in `directory`, oldest first.
std::vector<std::string> snapshot_files(const std::string& directory);

// Every snapshot in `directory` as one row of a float32 matrix [t, n]: the
// parameters flattened in the order of `parameters` (the model that will
// train in stage 2). A missing directory, a snapshot without one of the
// parameters or with another shape is a DataError naming the file and how to
// fix it.
at::Tensor read_trajectory(const std::string& directory, const NamedParameters& parameters);

}  // namespace orchestrate

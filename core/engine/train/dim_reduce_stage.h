// Dimension-reduce training inside a run, one concern of the step: stage 1
// saves weight snapshots ([snapshots], on rank 0; every rank's weights are
// the same), and stage 2 ([dim_reduce]) replaces the optimizer's update with
// a quasi-Newton step in the PCA subspace of those snapshots once it starts.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "distributed/collective.h"
#include "engine/dim_reduce/dim_reduce_training.h"
#include "engine/dim_reduce/weight_snapshots.h"
#include "engine/recipe/settings.h"
#include "engine/setup/components.h"
#include "orchestrate/stateful.h"
#include "store/run_recorder.h"
#include "store/run_records.h"

namespace orchestrate {


// Its state: stage 2's quasi-Newton state, once it has started (the same on
// every rank).
class DimReduceStage : public Stateful {
 public:
  using Message = std::function<void(const std::string&)>;  // an event line also shown on the progress line
  // The main classifier's loss on a batch at the current weights (stage 2's
  // line search), on this rank.
  using BatchLoss = std::function<at::Tensor(const at::Tensor& images, const at::Tensor& labels)>;

  // `artifact_root`: where the run's PCA matrix goes ("": beside the store).
  DimReduceStage(const Settings& settings, const TrainingComponents& components, const RunRecorder& recorder,
                 Collective* collective, const std::string& artifact_root, Message message);

  // Before a resume restores its state: stage 2 exists at once when the run
  // trains in it throughout, or when `resumed_at` (a checkpoint's update) is
  // already past its start (its state is in the checkpoint).
  void set_up(std::optional<std::int64_t> resumed_at);
  // Before (0-based) `epoch`: both stages in one run switch to stage 2 here.
  void start_if_due(std::int64_t epoch);
  bool active() const { return training_ != nullptr; }

  // The update's batch, which stage 2's line search evaluates again.
  void remember_batch(const at::Tensor& images, const at::Tensor& labels);
  // Stage 2's update from the job's mean loss, in place of the optimizer's.
  // The line search's losses are averaged over the ranks like the gradient.
  void step(const at::Tensor& loss, const BatchLoss& loss_of, std::map<std::string, at::Tensor>& metrics);

  // Stage 1: whether a snapshot was saved (and recorded) after `step`.
  bool snapshot_after_update(std::int64_t step, std::int64_t epoch);
  bool snapshot_after_epoch(std::int64_t epoch, std::int64_t step);

  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

 private:
  void start(bool resuming);
  bool snapshot(bool due, std::int64_t step, std::int64_t epoch);

  const Settings& s_;
  const RunRecorder recorder_;
  Collective* const collective_;
  const bool leader_;
  const Message message_;
  std::int64_t updates_per_epoch_;
  NamedParameters trainable_;  // by name: what snapshots save and stage 2 projects
  std::unique_ptr<WeightSnapshots> snapshots_;  // [snapshots], on rank 0
  DimReduceSettings settings_;                  // with the snapshot directory resolved
  std::string pca_path_;                        // where the run saves its PCA matrix
  std::unique_ptr<DimReduceTraining> training_;  // once stage 2 has started
  at::Tensor images_, labels_;  // the update's batch, for the line search
};

}  // namespace orchestrate

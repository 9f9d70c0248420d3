#include "engine/train/dim_reduce_stage.h"

#include <ATen/ATen.h>

#include "checkpoint/checkpointer.h"
#include "engine/train/run_hooks.h"

namespace orchestrate {

DimReduceStage::DimReduceStage(const Settings& settings, const TrainingComponents& components,
                               const RunRecorder& recorder, Collective* collective, const std::string& artifact_root,
                               Message message)
    : s_(settings),
      recorder_(recorder),
      collective_(collective),
      leader_(!collective || collective->rank() == 0),
      message_(std::move(message)),
      updates_per_epoch_(components.updates_per_epoch) {
  for (const auto& group : components.groups)
    for (const auto& parameter : group.parameters) trainable_.emplace_back(parameter.name, parameter.tensor);
  const std::string snapshot_directory =
      s_.snapshots.dir.empty()
          ? run_directory_under(directory_beside_store(recorder_.store_path(), "snapshots"), recorder_.run_id())
          : s_.snapshots.dir;
  if (s_.snapshots.policy.enabled() && leader_)
    snapshots_ = std::make_unique<WeightSnapshots>(s_.snapshots.policy, snapshot_directory);
  settings_ = s_.dim_reduce;
  if (settings_.snapshots.empty() && s_.snapshots.policy.enabled()) settings_.snapshots = snapshot_directory;
  const std::string artifacts =
      artifact_root.empty() ? directory_beside_store(recorder_.store_path(), kArtifactDirectory) : artifact_root;
  pca_path_ = run_directory_under(artifacts, recorder_.run_id()) + "/pca_mat.safetensors";
}

void DimReduceStage::set_up(std::optional<std::int64_t> resumed_at) {
  if (!s_.dim_reduce.enabled) return;
  const bool whole_run = s_.dim_reduce.from_epoch <= 1;
  const bool resumed_in_stage_two = resumed_at && *resumed_at > (s_.dim_reduce.from_epoch - 1) * updates_per_epoch_;
  if (whole_run || resumed_in_stage_two) start(resumed_at.has_value());
}

void DimReduceStage::start_if_due(std::int64_t epoch) {
  if (!training_ && s_.dim_reduce.enabled && epoch + 1 >= s_.dim_reduce.from_epoch) start(false);
}

// Builds stage 2: the PCA (computed, or read back when `resuming`) and the
// quasi-Newton state that replaces the optimizer's step from now on.
void DimReduceStage::start(bool resuming) {
  training_ = std::make_unique<DimReduceTraining>(
      settings_, trainable_,
      [this](at::Tensor& tensor) {
        if (collective_) collective_->broadcast(tensor);
      },
      leader_, pca_path_, resuming,
      [this](const std::string& line) {
        recorder_.event("dim_reduce", line);
        message_(line);
      });
}

void DimReduceStage::remember_batch(const at::Tensor& images, const at::Tensor& labels) {
  if (!training_) return;
  images_ = images;
  labels_ = labels;
}

void DimReduceStage::step(const at::Tensor& loss, const BatchLoss& loss_of,
                          std::map<std::string, at::Tensor>& metrics) {
  const auto step = training_->update(loss.item<double>(), [&] {
    auto value = loss_of(images_, labels_).detach().to(at::kDouble).reshape({1});
    if (collective_) {
      collective_->all_reduce_sum(value);
      value /= static_cast<double>(collective_->world_size());
    }
    return value.item<double>();
  });
  metrics["train/dim_reduce_step"] = at::scalar_tensor(step.step, at::kDouble);
  metrics["train/dim_reduce_trials"] = at::scalar_tensor(static_cast<double>(step.trials), at::kDouble);
}

bool DimReduceStage::snapshot_after_update(std::int64_t step, std::int64_t epoch) {
  return snapshots_ && snapshot(snapshots_->due_after_update(step, epoch), step, epoch);
}

bool DimReduceStage::snapshot_after_epoch(std::int64_t epoch, std::int64_t step) {
  return snapshots_ && snapshot(snapshots_->due_after_epoch(epoch), step, epoch);
}

bool DimReduceStage::snapshot(bool due, std::int64_t step, std::int64_t epoch) {
  if (!due) return false;
  const std::string path = snapshots_->save(trainable_, step, epoch);
  recorder_.event("snapshot", "weight snapshot at step " + std::to_string(step) + ": " + path);
  return true;
}

StateDict DimReduceStage::state_dict() const {
  if (!training_) return {};
  const auto state = training_->state();
  return StateDict(state.begin(), state.end());
}

void DimReduceStage::load_state_dict(const StateDict& state) {
  if (training_) training_->load_state({state.begin(), state.end()}, "the checkpoint");
}

}  // namespace orchestrate

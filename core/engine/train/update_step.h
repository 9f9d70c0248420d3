// The update strategy, one concern of the step: turns the accumulated
// gradients into new weights with the base optimizer behind its wrappers
// (plain, or accumulating micro-batches with batch_gradients), or with stage
// 2 of dimension-reduce training; skips the update when precision finds
// inf/nan gradients or the loss is not finite under on_nonfinite = "skip".
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/recipe/settings.h"
#include "engine/setup/components.h"
#include "engine/train/dim_reduce_stage.h"
#include "engine/train/precision_policy.h"
#include "orchestrate/stateful.h"
#include "store/run_recorder.h"
#include "store/run_records.h"

namespace orchestrate {


// Its state: the count of skipped updates.
class UpdateStep : public Stateful {
 public:
  UpdateStep(TrainingComponents& components, NonFinitePolicy on_nonfinite, const RunRecorder& recorder);

  // Whether on_nonfinite = "skip" will drop this update (one read of the loss).
  bool skips_for_loss(const at::Tensor& loss) const;
  // Applies update `update` (0-based) of 1-based `epoch` at learning rate
  // `lr`, then clears the gradients. A skipped update is counted and recorded.
  void apply(const at::Tensor& loss, double lr, std::int64_t update, std::int64_t epoch, PrecisionPolicy& precision,
             DimReduceStage& stage2, const DimReduceStage::BatchLoss& loss_of);

  const std::vector<at::Tensor>& parameters() const { return parameters_; }  // in optimizer order
  // Scalars the wrappers, the compressor and stage 2 log, on the device.
  std::map<std::string, at::Tensor>& metrics() { return metrics_; }
  std::int64_t skipped() const { return skipped_; }  // updates skipped so far

  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

 private:
  const PluginCallSite& wrapper_site(std::size_t i) const;
  TrainingComponents& c_;
  const NonFinitePolicy on_nonfinite_;
  const RunRecorder recorder_;
  std::vector<at::Tensor> parameters_;
  std::map<std::string, at::Tensor> metrics_;
  std::int64_t skipped_ = 0;
};

}  // namespace orchestrate

// The update strategy, one concern of the step: turns the accumulated
// gradients into new weights with the base optimizer behind its wrappers
// (plain, or accumulating micro-batches with batch_gradients), or with stage
// 2 of dimension-reduce training; skips the update when precision finds
// inf/nan gradients or the loss is not finite under on_nonfinite = "skip".
//
// Where the skip is decided: an optimizer that can skip on the device
// (SkipsOnDevice, orchestrate/optimizer.h), behind wrappers that only
// rewrite gradients or honour the flag (WrapperRules), is handed the check
// as a device flag, so no update waits for the device (torch.amp.GradScaler
// with a fused optimizer does the same). The checks are read later, a batch
// at a time (settle()): at log points, checkpoints, every
// kMaxUnreadSkipChecks updates and when the run fails, outside the step
// (sync_check.h), and each skipped update is then recorded under its own
// number. Otherwise the host reads each update's check before stepping. One
// event of the run ("skip_check") says which, and why.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/recipe/settings.h"
#include "engine/setup/components.h"
#include "engine/train/dim_reduce_stage.h"
#include "engine/train/precision_policy.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/stateful.h"
#include "store/run_recorder.h"
#include "store/run_records.h"

namespace orchestrate {

// Its state: the count of skipped updates.
class UpdateStep : public Stateful {
 public:
  // Updates whose skip checks may wait on the device before settle() reads them.
  static constexpr std::size_t kMaxUnreadSkipChecks = 256;

  UpdateStep(TrainingComponents& components, NonFinitePolicy on_nonfinite, const RunRecorder& recorder);

  // Whether on_nonfinite = "skip" will drop this update (one read of the loss).
  bool skips_for_loss(const at::Tensor& loss) const;
  // Applies update `update` (0-based) of 1-based `epoch` at learning rate
  // `lr`, then clears the gradients. A skipped update is counted and
  // recorded, at once or when its check is read (settle()).
  void apply(const at::Tensor& loss, double lr, std::int64_t update, std::int64_t epoch, PrecisionPolicy& precision,
             DimReduceStage& stage2, const DimReduceStage::BatchLoss& loss_of);
  // Reads the skip checks left on the device (one sync) and records each
  // skipped update. Const: the state is the same whenever they are read.
  // The step loop calls it outside the step, at the latest once
  // unread_checks_full(); the metrics and the checkpoint read them too.
  void settle() const;
  bool unread_checks_full() const { return unread_.size() >= kMaxUnreadSkipChecks; }

  const std::vector<at::Tensor>& parameters() const { return parameters_; }  // in optimizer order
  // Scalars the wrappers, the compressor and stage 2 log, on the device.
  std::map<std::string, at::Tensor>& metrics() { return metrics_; }
  // Updates skipped so far, every check read.
  std::int64_t skipped() const {
    settle();
    return skipped_;
  }

  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

 private:
  // One update stepped on the device, its check not yet read: 1-d float32
  // [found_inf, loss scale] with loss scaling, then [loss not finite] under
  // on_nonfinite = "skip".
  struct UnreadCheck {
    std::int64_t update, epoch;
    at::Tensor values;
  };

  const PluginCallSite& wrapper_site(std::size_t i) const;
  // The wrappers' before_step, the optimizer (or stage 2), their after_step.
  // `device_skip`: the flag the optimizer skips on.
  void step_optimizer(const at::Tensor& loss, double lr, std::int64_t update, DimReduceStage& stage2,
                      const DimReduceStage::BatchLoss& loss_of, const std::optional<at::Tensor>& device_skip);
  void step_skipping_on_device(const at::Tensor& loss, const at::Tensor& found_inf, double lr, std::int64_t update,
                               std::int64_t epoch, const PrecisionPolicy& precision, DimReduceStage& stage2,
                               const DimReduceStage::BatchLoss& loss_of);
  void record_skip(std::int64_t update, std::int64_t epoch, const std::string& reason) const;
  void say_where_skips_are_decided(bool on_device, bool in_stage2);

  TrainingComponents& c_;
  const NonFinitePolicy on_nonfinite_;
  const RunRecorder recorder_;
  SkipsOnDevice* const skipper_;  // the optimizer, when it can skip on the device
  std::vector<at::Tensor> parameters_;
  std::map<std::string, at::Tensor> metrics_;
  bool said_where_skips_are_decided_ = false;
  mutable std::vector<UnreadCheck> unread_;
  mutable std::int64_t skipped_ = 0;
};

}  // namespace orchestrate

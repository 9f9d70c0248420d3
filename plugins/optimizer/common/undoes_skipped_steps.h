// What an optimizer that skips on the device by undoing its step
// (undo_if_skipped.h) shares: adadelta, ftrl, rmsprop, adamweightdecay,
// whose foreach kernels take no found_inf flag.
//
// On a GPU the step always runs and is undone where the flag is 1. On the
// CPU the flag is host memory, so reading it costs no wait, and a set flag
// skips the step outright, as ATen's fused CPU kernels do with theirs; the
// undo would cost more than the step itself there (5.3 times adadelta's
// step over ResNet-50's weights, in a check of the same ATen ops). The step
// counts are counted on the device too (DeviceStepCounts), so a saved count
// leaves an undone step out.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "armed_skip.h"
#include "device_step_counts.h"
#include "orchestrate/optimizer.h"
#include "undo_if_skipped.h"

namespace orchestrate::optimizers {

class UndoesSkippedSteps : public SkipsOnDevice {
 public:
  void skip_next_step_if(const at::Tensor& found_inf) override { armed_.arm(found_inf); }

  // For tests: undo on the CPU too, the way a GPU run does.
  void undo_on_the_cpu_too() { undo_on_the_cpu_ = true; }

 protected:
  // What this step does with the flag it was handed, if any.
  struct SkipForThisStep {
    bool skip_outright = false;           // the flag, read on the host, is 1: step nothing
    std::optional<at::Tensor> undo_where;  // step, then undo where this flag is 1
  };
  SkipForThisStep take_skip() {
    auto found_inf = armed_.take();
    if (!found_inf || !found_inf->device().is_cpu() || undo_on_the_cpu_) return {false, std::move(found_inf)};
    return {found_inf->item<double>() != 0, std::nullopt};
  }

  // One param group's step: keeps what it will write and advances its step
  // counts on the device; finish() puts the values back and takes the
  // counts back where the flag is 1. The device counts are kept only while
  // they matter (a flag to undo by, or an undone step not yet written back
  // by save()), so a run that never hands a flag pays nothing for them.
  class GroupUndo {
   public:
    GroupUndo(const SkipForThisStep& skip, DeviceStepCounts& counts, const std::vector<at::Tensor>& params,
              const std::vector<std::int64_t>& steps_before, const TensorLists& will_write)
        : flag_(skip.undo_where),
          counts_(counts),
          steps_(flag_ || counts.may_lag() ? counts.advance(params, steps_before) : std::vector<at::Tensor>{}),
          undo_(skip.undo_where, will_write) {}
    void finish(const TensorLists& written) {
      undo_.put_back_if_skipped(written);
      if (flag_) counts_.take_back_if(steps_, *flag_);
    }

   private:
    std::optional<at::Tensor> flag_;
    DeviceStepCounts& counts_;
    std::vector<at::Tensor> steps_;
    UndoIfSkipped undo_;
  };
  GroupUndo undo_group(const SkipForThisStep& skip, const std::vector<at::Tensor>& params,
                       const std::vector<std::int64_t>& steps_before, const TensorLists& will_write) {
    return GroupUndo(skip, step_counts_, params, steps_before, will_write);
  }

  mutable DeviceStepCounts step_counts_;  // save() settles the host counts with it

 private:
  ArmedSkip armed_;
  bool undo_on_the_cpu_ = false;
};

}  // namespace orchestrate::optimizers

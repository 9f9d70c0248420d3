// What the ranks of a data-parallel job tell each other besides gradients,
// as typed messages: each field is named once, in the struct and its codec,
// never by position in a list of numbers at the call site.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "distributed/collective.h"
#include "store/run_records.h"

namespace orchestrate {

// One small all-reduce per update, so every rank decides the same: the
// job's mean loss (train/loss and on_nonfinite = "skip" see the mean over
// the global batch), whether any rank must stop (so all stop after the same
// update), and rank 0's time-based checkpoint wish (so all save together).
struct UpdateAgreement {
  at::Tensor mean_loss;  // 0-dim float, on the collective's device
  bool stop = false;
  bool save_by_time = false;
};

UpdateAgreement agree_on_update(Collective& collective, const at::Tensor& local_loss, bool stop_here,
                                bool save_by_time);

// Brings the step rows of ranks 1.. to rank 0, tagged with their rank. Every
// rank calls it at the same updates with the rows written since the last
// call (`mine`, emptied); rank 0 gets the other ranks' rows, the others none.
std::vector<StepTiming> gather_step_rows(Collective& collective, std::vector<StepTiming>& mine);

}  // namespace orchestrate

// What the ranks of a data-parallel job tell each other besides gradients,
// as typed messages: each field is named once, in the struct and its codec,
// never by position in a list of numbers at the call site.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Event.h>

#include <optional>
#include <vector>

#include "distributed/collective.h"
#include "store/run_records.h"

namespace orchestrate {

// One small all-reduce per update, so every rank decides the same: the
// job's mean loss (train/loss and on_nonfinite = "skip" see the mean over
// the global batch), whether any rank must stop (so all stop after the same
// update), and rank 0's time-based checkpoint wish (so all save together).
struct UpdateAgreement {
  at::Tensor mean_loss;  // 0-dim float, on the collective's device: this update's
  bool stop = false;          // agreed at the update before
  bool save_by_time = false;  // agreed at the update before
};

// The flags travel one update late. Those sent at update N are read at
// update N+1, when the GPU has that update's forward and backward queued
// after the all-reduce, so it never idles while the host learns them: read
// at once, they would make the host wait for the whole backward and the
// all-reduce at every update, and the GPU would then idle while the host
// launched the next step. Every rank acts
// on them at the same update, one later than they were sent. (So a wish to
// save by time raised at an epoch's last update, where an epoch's
// checkpoint is saved, saves once more after the next update.)
class UpdateAgreements {
 public:
  UpdateAgreement agree(Collective& collective, const at::Tensor& local_loss, bool stop_here, bool save_by_time);

 private:
  at::Tensor sums_on_host_;             // the last update's sums; pinned on CUDA
  std::optional<c10::Event> copied_;    // CUDA: recorded after their copy to the host
  bool sums_pending_ = false;           // sent and not yet read
};

// Brings the step rows of ranks 1.. to rank 0, tagged with their rank. Every
// rank calls it at the same updates with the rows written since the last
// call (`mine`, emptied); rank 0 gets the other ranks' rows, the others none.
std::vector<StepTiming> gather_step_rows(Collective& collective, std::vector<StepTiming>& mine);

}  // namespace orchestrate

// DGC's sparsity warm-up: the fraction of each gradient that is NOT sent
// rises stage by stage over the first epochs (the paper's 75 %, 93.75 %,
// 98.4375 %, 99.6 %, 99.9 %, one epoch each), so early training, when the
// gradients change fastest, is compressed least.
#pragma once

#include <cstdint>
#include <vector>

namespace orchestrate::dgc {

class SparsitySchedule {
 public:
  // `stages`: sparsities in [0, 1); each lasts `epochs_per_stage` epochs,
  // the last one for the rest of training.
  SparsitySchedule(std::vector<double> stages, double epochs_per_stage);

  // The sparsity for an update that starts after `epoch` (fractional) epochs.
  double at(double epoch) const;

 private:
  std::vector<double> stages_;
  double epochs_per_stage_;
};

// How many of `numel` elements a tensor sends at `sparsity`: at least one,
// so every tensor's residual keeps draining.
std::int64_t elements_to_send(std::int64_t numel, double sparsity);

}  // namespace orchestrate::dgc

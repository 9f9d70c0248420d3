// Early stopping of a sweep's trials, decided as each trial reaches a rung:
// `grace` x reduction_factor^k steps or epochs (k = 0, 1, ...), of which a
// trial meets those its recipe's length reaches.
//
// ASHA (asynchronous successive halving, Li et al. 2018, as Ray Tune's
// AsyncHyperBandScheduler): a trial reaching rung k goes on when its value
// is at least as good as the (1 - 1/reduction_factor) quantile of the values
// other trials reached rung k with before it (the first trial at a rung goes
// on), else it stops there. Nothing waits for a rung to fill: early trials
// are promoted on less evidence, which is what makes it asynchronous.
//
// The median rule (Ray Tune's MedianStoppingRule, at rungs): a trial stops
// at rung k when its value is worse than the median of the values of the
// other trials at rung k, once `min_samples` others have one.
//
// Pure bookkeeping, free of processes and of the store: the controller
// (sweep_run.cpp) feeds it the metric each trial recorded at each rung, and a
// resumed sweep feeds it the recorded history again to rebuild its state.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "sweep/sweep_spec.h"

namespace orchestrate::sweep {

class TrialScheduler {
 public:
  TrialScheduler(const EarlyStopping& stopping, Mode mode);

  bool stops_early() const { return stopping_.scheduler != Scheduler::none; }
  // Rung k's length in the spec's unit: grace x reduction_factor^k; -1 past
  // the largest that fits in 64 bits (no trial reaches it).
  std::int64_t rung_length(std::size_t k) const;

  // Trial `trial` reached rung `k` with `value` (NaN for a metric that is not
  // a number: worse than any). Returns false when it should stop there.
  // Reporting a rung twice for a trial keeps the first value and decision.
  bool reached(std::int64_t trial, std::size_t k, double value);

 private:
  EarlyStopping stopping_;
  Mode mode_;
  // rung -> trial -> (value, go on)
  std::map<std::size_t, std::map<std::int64_t, std::pair<double, bool>>> rungs_;
};

}  // namespace orchestrate::sweep

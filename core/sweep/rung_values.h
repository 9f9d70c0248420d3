// Where a trial met its rungs: from the values of the sweep's metric that
// its run recorded (metric_history.h), the first at or past each rung's
// length, in epochs (the `epoch` a value was recorded with: an evaluation
// after epoch 3 is epoch 3) or in steps.
#pragma once

#include <cstdint>
#include <vector>

#include "store/metric_history.h"
#include "sweep/trial_scheduler.h"

namespace orchestrate::sweep {

struct RungValue {
  std::size_t rung = 0;
  std::int64_t step = 0;
  double value = 0;
  double wall_time = 0;  // when it was recorded: the order in which trials met a rung
};

// In rung order; a rung no value has reached yet is not there.
std::vector<RungValue> rung_values(const std::vector<MetricPoint>& points, const TrialScheduler& scheduler,
                                   RungUnit unit);

}  // namespace orchestrate::sweep

#include "sweep/rung_values.h"

namespace orchestrate::sweep {

std::vector<RungValue> rung_values(const std::vector<MetricPoint>& points, const TrialScheduler& scheduler,
                                   RungUnit unit) {
  std::vector<RungValue> out;
  std::size_t k = 0;
  for (const MetricPoint& point : points) {
    const std::int64_t reached = unit == RungUnit::epochs ? point.epoch : point.step;
    // One value may meet several rungs at once (an evaluation every 4 epochs, rungs at 1 and 3).
    for (std::int64_t length = scheduler.rung_length(k); length >= 0 && reached >= length;
         length = scheduler.rung_length(++k))
      out.push_back({k, point.step, point.value, point.wall_time});
  }
  return out;
}

}  // namespace orchestrate::sweep

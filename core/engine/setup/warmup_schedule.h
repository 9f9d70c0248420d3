// A warm-up in front of any schedule ([schedule] warmup = "linear" |
// "exponential"): the rate rises from warmup_start_lr to the schedule's
// first rate over W updates, then the schedule runs from its own step 0, as
// the LARS seed's "2.0 -> 29.0 over 200 updates, then polynomial decay".
#pragma once

#include <cstdint>
#include <memory>

#include "engine/recipe/settings.h"
#include "orchestrate/lr_schedule.h"

namespace orchestrate {

class WarmupThenSchedule final : public LrSchedule {
 public:
  // `schedule` was built for the updates after the warm-up (its step 0 is update W).
  WarmupThenSchedule(WarmupShape shape, std::int64_t warmup_updates, double start_lr,
                     std::unique_ptr<LrSchedule> schedule);
  double learning_rate(std::int64_t step) const override;

 private:
  WarmupShape shape_;
  std::int64_t warmup_updates_;
  double start_lr_;
  double peak_lr_;  // the schedule's first rate
  std::unique_ptr<LrSchedule> schedule_;
};

}  // namespace orchestrate

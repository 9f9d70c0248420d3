#include "engine/setup/warmup_schedule.h"

#include <cmath>

namespace orchestrate {

WarmupThenSchedule::WarmupThenSchedule(WarmupShape shape, std::int64_t warmup_updates, double start_lr,
                                       std::unique_ptr<LrSchedule> schedule)
    : shape_(shape),
      warmup_updates_(warmup_updates),
      start_lr_(start_lr),
      peak_lr_(schedule->learning_rate(0)),
      schedule_(std::move(schedule)) {}

double WarmupThenSchedule::learning_rate(std::int64_t step) const {
  if (step >= warmup_updates_) return schedule_->learning_rate(step - warmup_updates_);
  const double progress = static_cast<double>(step) / static_cast<double>(warmup_updates_);
  if (shape_ == WarmupShape::exponential) return start_lr_ * std::pow(peak_lr_ / start_lr_, progress);
  return start_lr_ + (peak_lr_ - start_lr_) * progress;
}

}  // namespace orchestrate

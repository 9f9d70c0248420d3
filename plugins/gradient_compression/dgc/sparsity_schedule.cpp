#include "sparsity_schedule.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace orchestrate::dgc {

SparsitySchedule::SparsitySchedule(std::vector<double> stages, double epochs_per_stage)
    : stages_(std::move(stages)), epochs_per_stage_(epochs_per_stage) {}

double SparsitySchedule::at(double epoch) const {
  // A small tolerance: update * (1 / updates_per_epoch) may land just below a whole epoch.
  const auto stage = static_cast<std::size_t>(std::max(0.0, std::floor(epoch / epochs_per_stage_ + 1e-9)));
  return stages_[std::min(stage, stages_.size() - 1)];
}

std::int64_t elements_to_send(std::int64_t numel, double sparsity) {
  const auto kept = static_cast<std::int64_t>(std::ceil(static_cast<double>(numel) * (1.0 - sparsity) - 1e-9));
  return std::clamp<std::int64_t>(kept, 1, numel);
}

}  // namespace orchestrate::dgc

#include "sweep/trial_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace orchestrate::sweep {

namespace {

// The q-quantile of `values` (0 <= q <= 1) by linear interpolation between
// order statistics, as numpy's percentile (which Ray's ASHA uses) does.
double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

}  // namespace

TrialScheduler::TrialScheduler(const EarlyStopping& stopping, Mode mode) : stopping_(stopping), mode_(mode) {}

std::int64_t TrialScheduler::rung_length(std::size_t k) const {
  std::int64_t length = stopping_.grace;
  for (std::size_t i = 0; i < k; ++i) {
    if (length > std::numeric_limits<std::int64_t>::max() / stopping_.reduction_factor) return -1;
    length *= stopping_.reduction_factor;
  }
  return length;
}

bool TrialScheduler::reached(std::int64_t trial, std::size_t k, double value) {
  auto& rung = rungs_[k];
  if (const auto found = rung.find(trial); found != rung.end()) return found->second.second;
  // The others' values, NaN ones left out (numpy's nanpercentile), in the
  // mode's direction so that "at least the quantile" reads the same for min.
  std::vector<double> others;
  for (const auto& [other, entry] : rung)
    if (!std::isnan(entry.first)) others.push_back(mode_ == Mode::max ? entry.first : -entry.first);
  const double mine = mode_ == Mode::max ? value : -value;
  bool go_on = true;
  if (stopping_.scheduler == Scheduler::asha && !rung.empty()) {
    // Every other value NaN: any number beats them; a NaN never goes on past the first.
    go_on = !std::isnan(value) &&
            (others.empty() || mine >= quantile(others, 1.0 - 1.0 / static_cast<double>(stopping_.reduction_factor)));
  } else if (stopping_.scheduler == Scheduler::median &&
             rung.size() >= static_cast<std::size_t>(stopping_.min_samples)) {
    go_on = !std::isnan(value) && (others.empty() || mine >= quantile(others, 0.5));
  }
  rung[trial] = {value, go_on};
  return go_on;
}

}  // namespace orchestrate::sweep

// The learning-rate schedule interface: a pure function of the step.
#pragma once

#include <cstdint>
#include <string>

#include "orchestrate/api.h"

namespace orchestrate {

struct ScheduleContext {
  double base_lr = 0.0;            // the optimizer's configured learning rate
  std::int64_t steps_per_epoch = 0;
  std::int64_t total_steps = 0;
};

// How many steps one `unit` of a schedule's lengths is: 1 for "step", the
// steps per epoch for "epoch". Throws RecipeError naming `schedule` when
// epochs are asked for but the steps per epoch are unknown.
ORCHESTRATE_API double steps_per_unit(const std::string& unit, const ScheduleContext& context,
                                      const std::string& schedule);

// A schedule's decay length in steps: `length` in `unit`s, or the whole
// run (context.total_steps) when `length` is 0.
ORCHESTRATE_API double decay_length_in_steps(double length, const std::string& unit, const ScheduleContext& context,
                                             const std::string& schedule);

class ORCHESTRATE_API LrSchedule {
 public:
  virtual ~LrSchedule();
  // Learning rate for the 0-based global `step`. Pure, so resuming at any
  // step reproduces the same trajectory.
  virtual double learning_rate(std::int64_t step) const = 0;
};

}  // namespace orchestrate

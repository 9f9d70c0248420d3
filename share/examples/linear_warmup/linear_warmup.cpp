// lr_schedule "linear_warmup": ramps the learning rate linearly from
// base/warmup_steps to base over warmup_steps, then holds it.
#include <algorithm>
#include <memory>

#include "orchestrate/lr_schedule.h"
#include "orchestrate/plugin.h"

namespace {

class LinearWarmup : public orchestrate::LrSchedule {
 public:
  LinearWarmup(double base, std::int64_t warmup_steps) : base_(base), warmup_steps_(warmup_steps) {}
  double learning_rate(std::int64_t step) const override {
    return base_ * std::min<double>(1.0, static_cast<double>(step + 1) / static_cast<double>(warmup_steps_));
  }

 private:
  double base_;
  std::int64_t warmup_steps_;
};

void register_components(orchestrate::Registry& registry) {
  registry.lr_schedules().add(
      "linear_warmup", "linear warm-up to the base learning rate, then constant",
      {orchestrate::int_param("warmup_steps", 100, "steps to reach the base learning rate").at_least(1)},
      [](const orchestrate::Params& params, const orchestrate::ScheduleContext& context) {
        return std::make_unique<LinearWarmup>(context.base_lr, params.integer("warmup_steps"));
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("linear_warmup", "0.1.0", register_components)

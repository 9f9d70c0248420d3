// The optimizer's learning rate at every step.
#include <cstdint>
#include <memory>

#include "orchestrate/lr_schedule.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

class FixedSchedule final : public orchestrate::LrSchedule {
 public:
  explicit FixedSchedule(double base_lr) : base_lr_(base_lr) {}
  double learning_rate(std::int64_t) const override { return base_lr_; }

 private:
  double base_lr_;
};

void register_components(orchestrate::Registry& registry) {
  registry.lr_schedules().add("fixed", "constant: the optimizer's lr at every step", orchestrate::ParamSchema{},
                              [](const orchestrate::Params&, const orchestrate::ScheduleContext& context) {
                                return std::make_unique<FixedSchedule>(context.base_lr);
                              });
}

}  // namespace

ORCHESTRATE_PLUGIN("fixed", "1.0.0", register_components)

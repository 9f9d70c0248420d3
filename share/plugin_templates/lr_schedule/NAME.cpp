// lr_schedule "{{name}}": the optimizer's learning rate times a constant
// factor, at every step. Replace learning_rate() with your rule.
//
// The interface and its contract: orchestrate/lr_schedule.h (the rate is a
// pure function of the step, so a resumed run reproduces the same rates).
// orchestrate's LrScheduleConformance test (tests/conformance) checks it.
#include <cstdint>
#include <memory>
#include <utility>

#include "orchestrate/lr_schedule.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

class {{Name}} final : public orchestrate::LrSchedule {
 public:
  {{Name}}(double base_lr, double factor) : base_lr_(base_lr), factor_(factor) {}

  // `step` is the 0-based global update.
  double learning_rate(std::int64_t /*step*/) const override { return base_lr_ * factor_; }

 private:
  double base_lr_;  // the optimizer's `lr`
  double factor_;
};

void register_components(orchestrate::Registry& registry) {
  // Every key a recipe may set, with its default, documentation and range;
  // the host validates the [schedule] table against it before anything runs.
  orchestrate::ParamSchema schema{
      orchestrate::real_param("factor", 1.0, "multiplies the optimizer's lr at every step").greater_than(0),
  };
  registry.lr_schedules().add(
      "{{name}}", "constant: the optimizer's lr times `factor`", std::move(schema),
      [](const orchestrate::Params& params, const orchestrate::ScheduleContext& context) {
        return std::make_unique<{{Name}}>(context.base_lr, params.real("factor"));
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("{{name}}", "0.1.0", register_components)

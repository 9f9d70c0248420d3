// A second file whose descriptor takes the plugin name of a built-in
// ("cosine"), with a component of its own: the host must refuse it, naming
// both files, and never record it as the library of the built-in's code.
#include <memory>

#include "orchestrate/lr_schedule.h"
#include "orchestrate/plugin.h"

namespace {

class Constant final : public orchestrate::LrSchedule {
 public:
  explicit Constant(double lr) : lr_(lr) {}
  double learning_rate(std::int64_t) const override { return lr_; }

 private:
  double lr_;
};

void register_components(orchestrate::Registry& registry) {
  registry.lr_schedules().add("impostor", "a constant lr from a file that reuses the plugin name 'cosine'", {},
                              [](const orchestrate::Params&, const orchestrate::ScheduleContext& context) {
                                return std::make_unique<Constant>(context.base_lr);
                              });
}

}  // namespace

ORCHESTRATE_PLUGIN("cosine", "9.9.9", register_components)

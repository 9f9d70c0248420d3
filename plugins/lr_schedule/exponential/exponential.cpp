// Exponential decay as in TF's exponential_decay (and PAI FastNN's
// learning_rate_decay_type = exponential): lr = base * rate^(t / every), with
// the exponent floored when staircase, so lr drops once per period.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "orchestrate/error.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

using orchestrate::Params;
using orchestrate::ScheduleContext;

// A period given in epochs is rarely a whole number of steps in binary
// floating point (0.1 epoch x 3 steps = 0.30000000000000004); without this
// slack, the step that ends a period could floor to the period before.
constexpr double kRoundingSlack = 1e-9;

class ExponentialDecay final : public orchestrate::LrSchedule {
 public:
  ExponentialDecay(double base_lr, double decay_rate, double period_in_steps, bool staircase)
      : base_lr_(base_lr), decay_rate_(decay_rate), period_in_steps_(period_in_steps), staircase_(staircase) {}

  double learning_rate(std::int64_t step) const override {
    double periods = static_cast<double>(step) / period_in_steps_;
    if (staircase_) periods = std::floor(periods + kRoundingSlack);
    return base_lr_ * std::pow(decay_rate_, periods);
  }

 private:
  double base_lr_;
  double decay_rate_;
  double period_in_steps_;
  bool staircase_;
};

std::unique_ptr<orchestrate::LrSchedule> make_exponential(const Params& params, const ScheduleContext& context) {
  const double period_in_steps =
      params.real("decay_every") * orchestrate::steps_per_unit(params.string("unit"), context, "exponential");
  return std::make_unique<ExponentialDecay>(context.base_lr, params.real("decay_rate"), period_in_steps,
                                            params.boolean("staircase"));
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("decay_rate", 0.94, "factor applied to lr once per period").greater_than(0).at_most(1),
      real_param("decay_every", 1.0, "length of a period, in `unit`s (may be fractional)").greater_than(0),
      string_param("unit", "epoch", "what decay_every counts").one_of({"epoch", "step"}),
      bool_param("staircase", true, "decay in steps once per whole period, instead of continuously"),
  };
  registry.lr_schedules().add("exponential", "lr = base * decay_rate^(t / decay_every), stepwise if staircase",
                              std::move(schema), make_exponential);
}

}  // namespace

ORCHESTRATE_PLUGIN("exponential", "1.0.0", register_components)

// Polynomial decay as TF's tf.train.polynomial_decay, the decay of PAI
// FastNN's learning_rate_decay_type = polynomial and of MoXing's 32k-batch
// LARS recipe (power 2 over 3600 steps):
//
//   without cycle: t' = min(t, T),  T' = T
//   with cycle:    t' = t,          T' = T * ceil(t / T)  (t = 0 counts as one cycle)
//   lr = (base_lr - end_lr) * (1 - t' / T')^power + end_lr
//
// end_lr is absolute, as in TF and FastNN's end_learning_rate: it is the floor
// the run settles on whatever the optimizer's lr, not a fraction of it.
#include <algorithm>
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

class PolynomialDecay final : public orchestrate::LrSchedule {
 public:
  PolynomialDecay(double base_lr, double end_lr, double power, double length_in_steps, bool cycle)
      : base_lr_(base_lr), end_lr_(end_lr), power_(power), length_in_steps_(length_in_steps), cycle_(cycle) {}

  double learning_rate(std::int64_t step) const override {
    // A decay of no length (warmup took the whole run) has already ended.
    if (length_in_steps_ <= 0) return end_lr_;
    double t = static_cast<double>(step);
    double length = length_in_steps_;
    if (cycle_)
      length *= std::max(1.0, std::ceil(t / length_in_steps_));
    else
      t = std::min(t, length);
    return (base_lr_ - end_lr_) * std::pow(1.0 - t / length, power_) + end_lr_;
  }

 private:
  double base_lr_;
  double end_lr_;
  double power_;
  double length_in_steps_;
  bool cycle_;
};

std::unique_ptr<orchestrate::LrSchedule> make_polynomial(const Params& params, const ScheduleContext& context) {
  const double length_in_steps =
      orchestrate::decay_length_in_steps(params.real("decay_length"), params.string("unit"), context, "polynomial");
  return std::make_unique<PolynomialDecay>(context.base_lr, params.real("end_lr"), params.real("power"),
                                           length_in_steps, params.boolean("cycle"));
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("end_lr", 0.0001,
                 "absolute lr reached at the end of the decay (not a multiple of the optimizer's lr); "
                 "FastNN's end_learning_rate")
          .at_least(0),
      real_param("power", 1.0, "exponent of the decay: 1 is linear, 2 falls faster early on").greater_than(0),
      real_param("decay_length", 0.0, "length of the decay in `unit`s; 0: the whole run").at_least(0),
      string_param("unit", "epoch", "what decay_length counts").one_of({"epoch", "step"}),
      bool_param("cycle", false,
                 "past decay_length, rise again and decay over the next multiple of decay_length "
                 "(TF's cycle), instead of holding end_lr"),
  };
  registry.lr_schedules().add("polynomial",
                              "lr = (base - end_lr) * (1 - t/T)^power + end_lr over T (TF polynomial_decay)",
                              std::move(schema), make_polynomial);
}

}  // namespace

ORCHESTRATE_PLUGIN("polynomial", "1.0.0", register_components)

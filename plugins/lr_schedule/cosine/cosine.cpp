// Cosine annealing (Loshchilov & Hutter, SGDR), in the closed form of
// torch.optim.lr_scheduler.CosineAnnealingLR:
//
//   lr = end_lr + (base_lr - end_lr) * (1 + cos(pi * min(t, T) / T)) / 2
//
// Past T the lr holds at end_lr, as TF's cosine_decay does; torch's formula
// would climb back up, which a run whose decay ends at its last step (the
// default, T = the whole run) never reaches.
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

constexpr double kPi = 3.14159265358979323846;

class CosineAnnealing final : public orchestrate::LrSchedule {
 public:
  CosineAnnealing(double base_lr, double end_lr, double length_in_steps)
      : base_lr_(base_lr), end_lr_(end_lr), length_in_steps_(length_in_steps) {}

  double learning_rate(std::int64_t step) const override {
    // A decay of no length (warmup took the whole run) has already ended.
    if (length_in_steps_ <= 0) return end_lr_;
    const double t = std::min(static_cast<double>(step), length_in_steps_);
    return end_lr_ + (base_lr_ - end_lr_) * (1 + std::cos(kPi * t / length_in_steps_)) / 2;
  }

 private:
  double base_lr_;
  double end_lr_;
  double length_in_steps_;
};

std::unique_ptr<orchestrate::LrSchedule> make_cosine(const Params& params, const ScheduleContext& context) {
  const double length_in_steps =
      orchestrate::decay_length_in_steps(params.real("decay_length"), params.string("unit"), context, "cosine");
  return std::make_unique<CosineAnnealing>(context.base_lr, params.real("end_lr"), length_in_steps);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("end_lr", 0.0,
                 "absolute lr at the end of the decay (not a multiple of the optimizer's lr); "
                 "torch's eta_min")
          .at_least(0),
      real_param("decay_length", 0.0, "length of the decay in `unit`s, torch's T_max; 0: the whole run")
          .at_least(0),
      string_param("unit", "epoch", "what decay_length counts").one_of({"epoch", "step"}),
  };
  // Only the whole recipe knows the optimizer's lr: checked at load (and
  // --dry-run), not when the schedule is built mid-setup.
  schema.recipe_rule([](const Params& own, const RecipeView& recipe) -> std::string {
    const double end_lr = own.real("end_lr"), base = recipe.base_learning_rate();
    if (end_lr <= base) return "";
    return "end_lr " + to_display(ParamValue(end_lr)) + " is above the optimizer's lr " +
           to_display(ParamValue(base)) + ", so the schedule would raise the lr as it decays; lower end_lr "
           "(torch's eta_min, an absolute lr)";
  });
  registry.lr_schedules().add("cosine",
                              "lr = end_lr + (base - end_lr) * (1 + cos(pi t/T)) / 2, then end_lr "
                              "(torch CosineAnnealingLR)",
                              std::move(schema), make_cosine);
}

}  // namespace

ORCHESTRATE_PLUGIN("cosine", "1.0.0", register_components)

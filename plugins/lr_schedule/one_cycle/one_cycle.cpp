// The 1cycle policy (Smith & Topin, "Super-Convergence") as
// torch.optim.lr_scheduler.OneCycleLR defines it, with max_lr = the
// optimizer's lr and total_steps = the run's updates:
//
//   initial_lr = max_lr / div_factor,  min_lr = initial_lr / final_div_factor
//   phases (end step, from, to), N = total steps, p = pct_start:
//     two phases:   (p N - 1, initial, max), (N - 1, max, min)
//     three phases: (p N - 1, initial, max), (2 p N - 2, max, initial), (N - 1, initial, min)
//   in the first phase whose end step >= t (or the last phase), starting where
//   the previous one ended (0 for the first):
//     pct = (t - start) / (end - start)
//     cos:    lr = to + (from - to) (1 + cos(pi pct)) / 2
//     linear: lr = from + (to - from) pct
//
// OneCycleLR's total_steps counts lr values, one per update, so step t here is
// its t-th value. It refuses steps past N; here they hold the last rate.
// Its momentum cycling is not part of a learning-rate schedule and is not done.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "orchestrate/lr_schedule.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

using orchestrate::Params;
using orchestrate::ScheduleContext;

constexpr double kPi = 3.14159265358979323846;

struct Phase {
  double end_step;
  double from_lr;
  double to_lr;
};

class OneCycle final : public orchestrate::LrSchedule {
 public:
  OneCycle(std::vector<Phase> phases, std::int64_t last_step, bool cosine)
      : phases_(std::move(phases)), last_step_(last_step), cosine_(cosine) {}

  double learning_rate(std::int64_t step) const override {
    const double t = static_cast<double>(std::min(step, last_step_));
    double start = 0;
    for (std::size_t i = 0; i < phases_.size(); ++i) {
      const Phase& phase = phases_[i];
      if (t <= phase.end_step || i + 1 == phases_.size()) {
        // A phase of no length (a run of one or two steps) is already at its end.
        const double length = phase.end_step - start;
        const double pct = length > 0 ? (t - start) / length : 1.0;
        return anneal(phase.from_lr, phase.to_lr, pct);
      }
      start = phase.end_step;
    }
    return phases_.back().to_lr;
  }

 private:
  double anneal(double from, double to, double pct) const {
    if (cosine_) return to + (from - to) / 2.0 * (std::cos(kPi * pct) + 1);
    return (to - from) * pct + from;
  }

  std::vector<Phase> phases_;
  std::int64_t last_step_;
  bool cosine_;
};

std::unique_ptr<orchestrate::LrSchedule> make_one_cycle(const Params& params, const ScheduleContext& context) {
  const double max_lr = context.base_lr;
  const double initial_lr = max_lr / params.real("div_factor");
  const double min_lr = initial_lr / params.real("final_div_factor");
  const double steps = static_cast<double>(context.total_steps);
  const double warm_end = params.real("pct_start") * steps - 1;
  std::vector<Phase> phases;
  phases.push_back({warm_end, initial_lr, max_lr});
  if (params.boolean("three_phase")) phases.push_back({2 * warm_end, max_lr, initial_lr});
  phases.push_back({steps - 1, phases.back().to_lr, min_lr});
  return std::make_unique<OneCycle>(std::move(phases), std::max<std::int64_t>(context.total_steps - 1, 0),
                                    params.string("anneal_strategy") == "cos");
}

// Three phases spend 2 x pct_start of the run going up and back down; past
// half the run the last phase would never begin.
std::string three_phase_problem(const Params& params) {
  if (!params.boolean("three_phase") || params.real("pct_start") <= 0.5) return "";
  return "three_phase = true rises for pct_start and falls back for as long again, so pct_start must be <= 0.5, "
         "but is " + orchestrate::to_display(params.real("pct_start")) + "; lower pct_start or set three_phase = false";
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("pct_start", 0.3, "share of the run spent rising to the optimizer's lr (the peak)").between(0, 1),
      string_param("anneal_strategy", "cos", "shape of each rise and fall").one_of({"cos", "linear"}),
      real_param("div_factor", 25.0, "the run starts at the optimizer's lr / div_factor").greater_than(0),
      real_param("final_div_factor", 1e4, "the run ends at the starting lr / final_div_factor").greater_than(0),
      bool_param("three_phase", false,
                 "after the peak, fall back to the starting lr as fast as it rose, then anneal to the final "
                 "lr (the paper's form), instead of annealing from the peak straight to the final lr"),
  };
  schema.rule(three_phase_problem);
  registry.lr_schedules().add("one_cycle",
                              "1cycle: rise to the optimizer's lr, then anneal far below it (torch OneCycleLR)",
                              std::move(schema), make_one_cycle);
}

}  // namespace

ORCHESTRATE_PLUGIN("one_cycle", "1.0.0", register_components)

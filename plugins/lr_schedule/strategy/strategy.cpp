// MoXing's learning_rate_strategy: the lr given stage by stage, e.g.
// "5:0.001->0.4,30:0.4,60:0.04,80:0.004,90:0.0004" (the ResNet-50 DGC recipe)
// ramps from 0.001 to 0.4 over epochs 0-5, holds 0.4 until epoch 30, 0.04
// until 60, and so on; after the last stage its lr holds.
//
// Stage i covers steps [s, e), s = the previous stage's end (0 for the
// first), both in steps (unit x steps per epoch, rounded up). In it:
//   constant:          lr = lr_i
//   ramp, linear:      lr = a + (b - a) * (t - s) / (e - s)
//   ramp, exponential: lr = a * (b / a)^((t - s) / (e - s))
// (`ramp`, MoXing's lr_warmup_strategy: a linear ramp, or TF's
// exponential_decay(a, t, e, b / a) without staircase.) MoXing allows a ramp in the first stage only;
// here any stage may ramp, so "60:0.04->0.004" decays linearly.
//
// MoXing's TF code keeps a stage's lr for one more step, the first of the next
// stage (tf.train.piecewise_constant's `step <= boundary`); here a stage ends
// where its epoch ends, like the piecewise schedule.
//
// The lrs are absolute: this schedule replaces the optimizer's lr.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lr_stages.h"
#include "orchestrate/error.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

using orchestrate::Params;
using orchestrate::RecipeError;
using orchestrate::ScheduleContext;
namespace lr_stages = orchestrate::lr_stages;

// Stage ends given in epochs are rarely whole steps in binary floating point
// (2.2 epochs x 25 steps = 55.00000000000001); without this slack, an end
// meant to fall on a step would move to the next one.
constexpr double kRoundingSlack = 1e-9;

struct StageInSteps {
  std::int64_t start;
  std::int64_t end;  // first step after the stage
  lr_stages::Stage stage;
};

class StagedLearningRate final : public orchestrate::LrSchedule {
 public:
  StagedLearningRate(std::vector<StageInSteps> stages, double final_lr, bool exponential_ramps)
      : stages_(std::move(stages)), final_lr_(final_lr), exponential_ramps_(exponential_ramps) {}

  double learning_rate(std::int64_t step) const override {
    const auto stage = std::upper_bound(stages_.begin(), stages_.end(), step,
                                        [](std::int64_t t, const StageInSteps& s) { return t < s.end; });
    if (stage == stages_.end()) return final_lr_;
    const auto& [start, end, lrs] = *stage;
    if (!lrs.ramp) return lrs.start_lr;
    // start <= step < end here, so the stage has at least one step.
    const double progress = static_cast<double>(step - start) / static_cast<double>(end - start);
    if (exponential_ramps_) return lrs.start_lr * std::pow(lrs.end_lr / lrs.start_lr, progress);
    return lrs.start_lr + (lrs.end_lr - lrs.start_lr) * progress;
  }

 private:
  std::vector<StageInSteps> stages_;
  double final_lr_;  // the last stage's last lr, held after it
  bool exponential_ramps_;
};

// The stages text's problem, or that of an exponential ramp from or to 0.
std::string stages_problem(const Params& params) {
  const auto parsed = lr_stages::parse(params.string("stages"));
  if (!parsed.problem.empty()) return parsed.problem;
  if (params.string("ramp") != "exponential") return "";
  for (std::size_t i = 0; i < parsed.stages.size(); ++i) {
    const auto& stage = parsed.stages[i];
    if (stage.ramp && (stage.start_lr <= 0 || stage.end_lr <= 0))
      return "stage " + std::to_string(i + 1) + " \"" + stage.text +
             "\": an exponential ramp multiplies its lr, so it cannot start or end at 0; "
             "give both lrs > 0 or use ramp = \"linear\"";
  }
  return "";
}

std::unique_ptr<orchestrate::LrSchedule> make_strategy(const Params& params, const ScheduleContext& context) {
  if (auto problem = stages_problem(params); !problem.empty())
    throw RecipeError("[schedule] strategy: " + problem);
  const double steps_per_unit = orchestrate::steps_per_unit(params.string("unit"), context, "strategy");
  auto parsed = lr_stages::parse(params.string("stages"));
  const double final_lr = parsed.stages.back().end_lr;
  std::vector<StageInSteps> stages;
  std::int64_t start = 0;
  for (auto& stage : parsed.stages) {
    const auto end = static_cast<std::int64_t>(std::ceil(stage.end * steps_per_unit - kRoundingSlack));
    // A stage shorter than a step after rounding holds no step.
    if (end > start) stages.push_back({start, end, std::move(stage)});
    start = std::max(start, end);
  }
  return std::make_unique<StagedLearningRate>(std::move(stages), final_lr, params.string("ramp") == "exponential");
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      string_param("stages", "30:0.1,60:0.01,80:0.001,90:0.0001",
                   "MoXing's learning_rate_strategy: comma-separated END:LR (lr until END) or "
                   "END:LR_START->LR_END (a ramp); absolute lrs that replace the optimizer's lr"),
      string_param("ramp", "linear",
                   "shape of the LR_START->LR_END ramps (MoXing's lr_warmup_strategy; not named warmup, which "
                   "is the core's warm-up before any schedule)")
          .one_of({"linear", "exponential"}),
      string_param("unit", "epoch", "what the stage ends count").one_of({"epoch", "step"}),
  };
  schema.rule(stages_problem);
  registry.lr_schedules().add("strategy",
                              "MoXing's stage string: \"5:0.001->0.4,30:0.4,60:0.04\" (absolute lrs, ramps allowed)",
                              std::move(schema), make_strategy);
}

}  // namespace

ORCHESTRATE_PLUGIN("strategy", "1.0.0", register_components)

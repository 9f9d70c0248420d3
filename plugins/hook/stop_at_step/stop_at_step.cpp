// FastNN's stop_at_step: training ends after update N, with the final
// evaluation, checkpoint and export, while the learning-rate schedule keeps
// the length the recipe gave it. ([run] max_steps, by contrast, shortens the
// schedule too.) A resumed run already past N stops before its first update.
#include <cstdint>
#include <memory>
#include <string>

#include "orchestrate/hook.h"
#include "orchestrate/plugin.h"

namespace {

class StopAtStep final : public orchestrate::Hook {
 public:
  explicit StopAtStep(std::int64_t last_step) : last_step_(last_step) {}

  void on_train_begin(const orchestrate::TrainBegin& run, orchestrate::HookSink& sink) override {
    if (run.first_step >= last_step_) sink.request_stop(reason());
  }
  void after_update(const orchestrate::StepView& step, orchestrate::HookSink& sink) override {
    if (step.step >= last_step_) sink.request_stop(reason());
  }

 private:
  std::string reason() const { return "stop_at_step: step " + std::to_string(last_step_) + " reached"; }
  std::int64_t last_step_;
};

void register_components(orchestrate::Registry& registry) {
  registry.hooks().add(
      "stop_at_step",
      "ends training after update N (FastNN's stop_at_step), keeping the schedule's length; the final evaluation, "
      "checkpoint and export still happen",
      {orchestrate::int_param("step", std::nullopt, "the last update to run (1-based)").at_least(1)},
      [](const orchestrate::Params& params, const orchestrate::HookContext&) {
        return std::make_unique<StopAtStep>(params.integer("step"));
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("stop_at_step", "1.0.0", register_components)

// A hook with a plugin author's commonest native bug: at update `step` its
// after_update writes through a null pointer (SIGSEGV). The host must name
// this plugin, the call and the step, and record the run as failed.
#include <cstdint>
#include <memory>

#include "orchestrate/hook.h"
#include "orchestrate/plugin.h"

namespace {

int* volatile null_pointer = nullptr;  // volatile: the compiler cannot prove the store undefined and drop it

class CrashingHook final : public orchestrate::Hook {
 public:
  CrashingHook(std::int64_t at_step, bool crashes) : at_step_(at_step), crashes_(crashes) {}
  void after_update(const orchestrate::StepView& step, orchestrate::HookSink&) override {
    if (crashes_ && step.step == at_step_) *null_pointer = 1;
  }

 private:
  std::int64_t at_step_;
  bool crashes_;
};

void register_components(orchestrate::Registry& registry) {
  registry.hooks().add("crash_at_step", "writes through a null pointer after update N (a test of crash reports)",
                       {orchestrate::int_param("step", 3, "the update after which it crashes").at_least(1),
                        orchestrate::int_param("rank", -1, "the rank that crashes; -1: every rank").at_least(-1)},
                       [](const orchestrate::Params& params, const orchestrate::HookContext& context) {
                         const std::int64_t rank = params.integer("rank");
                         return std::make_unique<CrashingHook>(params.integer("step"), rank < 0 || rank == context.rank);
                       });
}

}  // namespace

ORCHESTRATE_PLUGIN("crashing_hook", "1.0.0", register_components)

// A hook that keeps state across --resume (orchestrate/stateful.h): it
// counts the updates it has seen and records the count as hook/updates_seen
// at every update, so after a kill -9 and a resume the count still equals
// the step. `sleep_ms` slows each update, so a test can kill it mid-run.
#include <ATen/ATen.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "orchestrate/hook.h"
#include "orchestrate/plugin.h"

namespace {

class CountingHook final : public orchestrate::Hook {
 public:
  explicit CountingHook(std::int64_t sleep_ms) : sleep_ms_(sleep_ms) {}

  void after_update(const orchestrate::StepView&, orchestrate::HookSink& sink) override {
    ++seen_;
    sink.metric("hook/updates_seen", static_cast<double>(seen_));
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
  }

  orchestrate::StateDict state_dict() const override { return {{"updates_seen", at::scalar_tensor(seen_, at::kLong)}}; }
  void load_state_dict(const orchestrate::StateDict& state) override {
    seen_ = state.at("updates_seen").item<std::int64_t>();
  }

 private:
  std::int64_t sleep_ms_;
  std::int64_t seen_ = 0;
};

void register_components(orchestrate::Registry& registry) {
  registry.hooks().add("count_updates", "counts the updates it sees, across --resume (a test of hook state)",
                       {orchestrate::int_param("sleep_ms", 0, "milliseconds to sleep after each update").at_least(0)},
                       [](const orchestrate::Params& params, const orchestrate::HookContext&) {
                         return std::make_unique<CountingHook>(params.integer("sleep_ms"));
                       });
}

}  // namespace

ORCHESTRATE_PLUGIN("counting_hook", "1.0.0", register_components)

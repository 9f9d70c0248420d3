// hook "{{name}}": records the training loss every `every_n` updates as the
// metric train/{{name}}_loss. Override the other callbacks (on_train_begin,
// before_update, on_train_end) for what your hook watches.
//
// The interface and its contract: orchestrate/hook.h (a hook leaves the model
// as it found it; a stop is requested from the step view, so every rank asks
// at the same update; reading the loss waits for the device, so read it only
// when needed). orchestrate's HookConformance test (tests/conformance) checks it.
#include <cstdint>
#include <memory>
#include <utility>

#include "orchestrate/hook.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

class {{Name}} final : public orchestrate::Hook {
 public:
  explicit {{Name}}(std::int64_t every_n) : every_n_(every_n) {}

  void after_update(const orchestrate::StepView& step, orchestrate::HookSink& sink) override {
    if (step.step % every_n_ != 0) return;
    // .item() waits for the device: only at the updates that record.
    sink.metric("train/{{name}}_loss", step.loss.item<double>());
  }

 private:
  std::int64_t every_n_;
};

void register_components(orchestrate::Registry& registry) {
  // Every key a recipe may set, with its default, documentation and range;
  // the host validates the [[hooks]] entry against it before anything runs.
  orchestrate::ParamSchema schema{
      orchestrate::int_param("every_n", 10, "record the loss after every N-th update").at_least(1),
  };
  registry.hooks().add("{{name}}", "records the training loss every N updates as train/{{name}}_loss",
                       std::move(schema),
                       [](const orchestrate::Params& params, const orchestrate::HookContext& /*context*/) {
                         return std::make_unique<{{Name}}>(params.integer("every_n"));
                       });
}

}  // namespace

ORCHESTRATE_PLUGIN("{{name}}", "0.1.0", register_components)

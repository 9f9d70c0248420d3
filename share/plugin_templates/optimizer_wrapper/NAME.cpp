// optimizer_wrapper "{{name}}": multiplies every gradient by `scale` before
// the base optimizer steps. Replace before_step() (and after_step()) with
// what your wrapper does to an update.
//
// The interface and its contract: orchestrate/optimizer_wrapper.h (the
// gradients before_step() sees are the update's final ones: accumulated,
// unscaled, synchronised across ranks; it may rewrite them). Ordering rules
// (first, last, exclusive with another wrapper) are declared with
// orchestrate::WrapperRules in orchestrate/registry.h. orchestrate's
// WrapperConformance test (tests/conformance) checks it.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <memory>
#include <utility>
#include <vector>

#include "orchestrate/optimizer.h"
#include "orchestrate/optimizer_wrapper.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

class {{Name}} final : public orchestrate::OptimizerWrapper {
 public:
  {{Name}}(double scale, std::vector<orchestrate::ParameterGroup> groups)
      : scale_(scale), groups_(std::move(groups)) {}

  void before_step(orchestrate::UpdateView& view) override {
    at::NoGradGuard no_grad;
    std::vector<at::Tensor> norms;
    for (const auto& group : groups_)
      for (const auto& parameter : group.parameters) {
        const auto& gradient = parameter.tensor.grad();
        if (!gradient.defined()) continue;  // the loss did not reach it
        gradient.mul_(scale_);
        norms.push_back(at::linalg_vector_norm(gradient));
      }
    // A metric stays a tensor on the device; the host reads it at log points
    // only, so the update never waits for the device here.
    if (!norms.empty()) view.metrics["train/{{name}}_grad_norm"] = at::linalg_vector_norm(at::stack(norms));
  }
  // No state to checkpoint; a wrapper with state overrides state_dict() and
  // load_state_dict() (orchestrate/stateful.h).

 private:
  double scale_;
  std::vector<orchestrate::ParameterGroup> groups_;  // the same tensors the base optimizer steps
};

void register_components(orchestrate::Registry& registry) {
  // Every key a recipe may set, with its default, documentation and range;
  // the host validates the [[optimizer.wrappers]] entry against it.
  orchestrate::ParamSchema schema{
      orchestrate::real_param("scale", 1.0, "multiplies every gradient before the base optimizer steps")
          .greater_than(0),
  };
  registry.optimizer_wrappers().add(
      "{{name}}", "scales every gradient by `scale`", std::move(schema),
      [](const orchestrate::Params& params, const orchestrate::WrapperContext& context) {
        return std::make_unique<{{Name}}>(params.real("scale"), context.groups);
      },
      orchestrate::WrapperRules{});
}

}  // namespace

ORCHESTRATE_PLUGIN("{{name}}", "0.1.0", register_components)

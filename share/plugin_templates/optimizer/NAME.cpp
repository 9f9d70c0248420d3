// optimizer "{{name}}": plain stochastic gradient descent over the parameter
// groups the host forms, w -= lr * (g + weight_decay * w). Replace step()
// with your update rule.
//
// The interface and its contract: orchestrate/optimizer.h (one torch param
// group per context group, in order; group i starts at lr * lr_scale with
// the group's weight decay; step() uses the lr the host sets on each group
// before every update; the schema declares a real `lr`). orchestrate's
// OptimizerConformance test (tests/conformance) checks it.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/sgd.h>

#include <memory>
#include <utility>
#include <vector>

#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

class {{Name}} final : public torch::optim::Optimizer {
 public:
  // torch's SGDOptions hold each group's lr and weight decay; an optimizer
  // with more settings defines its own OptimizerCloneableOptions subclass.
  {{Name}}(const std::vector<torch::optim::OptimizerParamGroup>& groups, const torch::optim::SGDOptions& defaults)
      : torch::optim::Optimizer(groups, std::make_unique<torch::optim::SGDOptions>(defaults)) {}

  at::Tensor step(LossClosure closure = nullptr) override {
    at::NoGradGuard no_grad;
    at::Tensor loss;
    if (closure) {
      at::AutoGradMode enable_grad(true);
      loss = closure();
    }
    for (auto& group : param_groups_) {
      const auto& options = static_cast<const torch::optim::SGDOptions&>(group.options());
      for (auto& parameter : group.params()) {
        if (!parameter.grad().defined()) continue;
        auto update = parameter.grad();
        if (options.weight_decay() != 0) update = update.add(parameter, options.weight_decay());
        parameter.add_(update, -options.lr());
      }
    }
    return loss;
  }
  // Plain SGD keeps no state; an optimizer that does (momentum, moments)
  // overrides save() and load() so a resumed run continues exactly.
};

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const orchestrate::Params& params,
                                                        const orchestrate::OptimizerContext& context) {
  const torch::optim::SGDOptions options(params.real("lr"));
  return std::make_unique<{{Name}}>(orchestrate::make_param_groups(context, options), options);
}

void register_components(orchestrate::Registry& registry) {
  // Every key a recipe may set, with its default, documentation and range;
  // the host validates the [optimizer] table against it before anything runs.
  orchestrate::ParamSchema schema{
      orchestrate::real_param("lr", 0.01, "base learning rate; the schedule scales it at every step")
          .greater_than(0)
          .with_role(orchestrate::ParamRole::learning_rate),
  };
  registry.optimizers().add("{{name}}", "stochastic gradient descent: w -= lr * (g + weight_decay * w)",
                            std::move(schema), make_optimizer);
}

}  // namespace

ORCHESTRATE_PLUGIN("{{name}}", "0.1.0", register_components)

// SGD with heavy-ball or Nesterov momentum in PyTorch's formulation
// (v = momentum * v + g; w -= lr * v), the optimizer of most ResNet recipes.
// The host's weight decay is torch's L2 term added to the gradient.
//
// It is also TensorFlow's ApplyMomentum (FastNN's "momentum"): lr stays
// outside the buffer there too, and Nesterov steps along g + momentum * v.
//
// Runs ATen's fused kernel (at::_fused_sgd_, CPU and CUDA).
#include <torch/optim/sgd.h>

#include <memory>
#include <string>

#include "../common/fused_sgd.h"
#include "orchestrate/error.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using orchestrate::OptimizerContext;
using orchestrate::Params;

// A schema rule, so the host reports it at recipe load with the table's file:line.
std::string nesterov_without_momentum(const Params& params) {
  if (params.boolean("nesterov") && params.real("momentum") == 0)
    return "nesterov = true needs momentum > 0; set momentum or nesterov = false";
  return "";
}

std::unique_ptr<torch::optim::Optimizer> make_momentum(const Params& params, const OptimizerContext& context) {
  // The host has run the rule already; this keeps a direct call from reaching torch's TORCH_CHECK.
  if (auto problem = nesterov_without_momentum(params); !problem.empty())
    throw orchestrate::RecipeError("[optimizer] momentum: " + problem);
  const auto options =
      torch::optim::SGDOptions(params.real("lr")).momentum(params.real("momentum")).nesterov(params.boolean("nesterov"));
  return std::make_unique<orchestrate::optimizers::FusedSgd>(orchestrate::make_param_groups(context, options), options);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("lr", 0.01, "base learning rate (FastNN's learning_rate default); the schedule scales from it")
          .greater_than(0)
          .with_role(orchestrate::ParamRole::learning_rate),
      real_param("momentum", 0.9, "momentum factor (FastNN's default)").between(0, 1),
      bool_param("nesterov", false, "use Nesterov momentum (needs momentum > 0)"),
  };
  schema.rule(nesterov_without_momentum);
  registry.optimizers().add("momentum", "SGD with (optionally Nesterov) momentum", std::move(schema), make_momentum);
}

}  // namespace

ORCHESTRATE_PLUGIN("momentum", "2.0.0", register_components)

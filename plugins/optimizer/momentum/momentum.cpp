// SGD with heavy-ball or Nesterov momentum, in PyTorch's formulation
// (v = momentum * v + g; w -= lr * v), the optimizer of most ResNet recipes.
#include <torch/optim/sgd.h>

#include <memory>
#include <string>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using orchestrate::Params;
using orchestrate::RecipeError;

std::unique_ptr<torch::optim::Optimizer> make_momentum(const Params& params, std::vector<at::Tensor> parameters) {
  if (params.boolean("nesterov") && params.real("momentum") == 0)
    throw RecipeError("[optimizer] momentum: nesterov = true needs momentum > 0; set momentum or nesterov = false");
  const auto options = torch::optim::SGDOptions(params.real("lr"))
                           .momentum(params.real("momentum"))
                           .nesterov(params.boolean("nesterov"))
                           .weight_decay(params.real("weight_decay"));
  return std::make_unique<torch::optim::SGD>(std::move(parameters), options);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("lr", 0.01, "base learning rate; the schedule scales from it").greater_than(0),
      real_param("momentum", 0.9, "momentum factor").between(0, 1),
      bool_param("nesterov", false, "use Nesterov momentum"),
      real_param("weight_decay", 0.0, "L2 penalty: weight_decay * w is added to each gradient").at_least(0),
  };
  registry.optimizers().add("momentum", "SGD with (optionally Nesterov) momentum", std::move(schema), make_momentum);
}

}  // namespace

ORCHESTRATE_PLUGIN("momentum", "1.0.0", register_components)

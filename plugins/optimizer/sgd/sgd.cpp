// Plain stochastic gradient descent, weight decay as an L2 term in the gradient.
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

std::unique_ptr<torch::optim::Optimizer> make_sgd(const Params& params, std::vector<at::Tensor> parameters) {
  return std::make_unique<torch::optim::SGD>(
      std::move(parameters), torch::optim::SGDOptions(params.real("lr")).weight_decay(params.real("weight_decay")));
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("lr", 0.01, "base learning rate; the schedule scales from it").greater_than(0),
      real_param("weight_decay", 0.0, "L2 penalty: weight_decay * w is added to each gradient").at_least(0),
  };
  registry.optimizers().add("sgd", "stochastic gradient descent without momentum", std::move(schema), make_sgd);
}

}  // namespace

ORCHESTRATE_PLUGIN("sgd", "1.0.0", register_components)

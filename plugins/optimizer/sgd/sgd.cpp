// Plain stochastic gradient descent; the host's weight decay is the L2 term
// torch.optim.SGD adds to the gradient (weight_decay * w).
//
// Runs ATen's fused kernel (at::_fused_sgd_, CPU and CUDA): one call per
// param group instead of one chain of kernels per parameter.
#include <torch/optim/sgd.h>

#include <memory>

#include "../common/fused_sgd.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using orchestrate::OptimizerContext;
using orchestrate::Params;

std::unique_ptr<torch::optim::Optimizer> make_sgd(const Params& params, const OptimizerContext& context) {
  const auto options = torch::optim::SGDOptions(params.real("lr"));
  return std::make_unique<orchestrate::optimizers::FusedSgd>(orchestrate::make_param_groups(context, options), options);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("lr", 0.01, "base learning rate (FastNN's learning_rate default); the schedule scales from it")
          .greater_than(0)
          .with_role(orchestrate::ParamRole::learning_rate),
  };
  registry.optimizers().add("sgd", "stochastic gradient descent without momentum", std::move(schema), make_sgd);
}

}  // namespace

ORCHESTRATE_PLUGIN("sgd", "2.0.0", register_components)

// RMSprop (Hinton's lecture 6e) in PyTorch's formulation, with FastNN's
// defaults (decay 0.9, momentum 0.9, epsilon 1.0):
//   ms = decay * ms + (1 - decay) * g^2              (ms starts at 0)
//   buf = momentum * buf + g / (sqrt(ms) + eps);  w -= lr * buf
// centered subtracts the square of a running mean of g inside the sqrt.
// The host's weight decay is the L2 term torch.optim.RMSprop adds to g.
//
// TensorFlow's RMSPropOptimizer (FastNN's, ApplyRMSProp in training_ops.cc)
// differs in three ways, so the same hyperparameters train differently:
//   - eps inside the square root: g / sqrt(ms + eps), not g / (sqrt(ms) + eps);
//     with eps = 1.0 that is a large difference early on;
//   - lr inside the momentum: mom = momentum * mom + lr * g / ..., w -= mom,
//     so an lr change takes effect gradually there and at once here;
//   - ms starts at 1.0, not 0, which damps TF's first steps.
//
// Runs ATen foreach ops (foreach_rmsprop.h).
#include <torch/optim/rmsprop.h>

#include <memory>

#include "foreach_rmsprop.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using orchestrate::OptimizerContext;
using orchestrate::Params;

std::unique_ptr<torch::optim::Optimizer> make_rmsprop(const Params& params, const OptimizerContext& context) {
  const auto options = torch::optim::RMSpropOptions(params.real("lr"))
                           .alpha(params.real("decay"))
                           .momentum(params.real("momentum"))
                           .eps(params.real("eps"))
                           .centered(params.boolean("centered"));
  return std::make_unique<orchestrate::optimizers::ForeachRmsprop>(orchestrate::make_param_groups(context, options),
                                                                   options);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("lr", 0.01, "base learning rate (FastNN's learning_rate default); the schedule scales from it")
          .greater_than(0)
          .with_role(orchestrate::ParamRole::learning_rate),
      real_param("decay", 0.9,
                 "decay rate of the running mean of squared gradients: PyTorch's alpha, FastNN's rmsprop_decay "
                 "(PyTorch's default is 0.99)")
          .at_least(0)
          .less_than(1),
      real_param("momentum", 0.9, "momentum factor: FastNN's rmsprop_momentum (PyTorch's default is 0)").between(0, 1),
      real_param("eps", 1.0,
                 "added to sqrt(mean square): FastNN's opt_epsilon (TF-slim's default); PyTorch's default is 1e-8")
          .at_least(0),
      bool_param("centered", false, "divide by the estimated variance of g instead of its raw second moment"),
  };
  registry.optimizers().add("rmsprop", "RMSprop, PyTorch's formulation with FastNN's defaults (foreach kernels)",
                            std::move(schema), make_rmsprop);
}

}  // namespace

ORCHESTRATE_PLUGIN("rmsprop", "1.0.0", register_components)

// Adadelta (Zeiler, 2012) with FastNN's defaults (rho 0.95, epsilon 1.0):
//   ms = rho * ms + (1 - rho) * g^2
//   delta = sqrt(md + eps) / sqrt(ms + eps) * g;  md = rho * md + (1 - rho) * delta^2
//   w -= lr * delta
// The host's weight decay is the L2 term torch.optim.Adadelta adds to g.
//
// lr defaults to FastNN's learning_rate of 0.01, with FastNN's eps: the
// pair FastNN actually ran (tf.train.AdadeltaOptimizer(learning_rate,
// rho, epsilon)). Zeiler's method has no lr, which is lr = 1.0 here, as in
// PyTorch; but that belongs with Zeiler's and PyTorch's eps of 1e-6. With
// eps = 1.0 the first steps are sqrt(eps) / sqrt(ms + eps) * g, about g, so
// lr = 1.0 would start as SGD at lr 1 and diverge wherever the curvature
// exceeds 2; at 0.01 it starts as SGD at FastNN's learning rate. For
// Zeiler's Adadelta set lr = 1.0 and eps = 1e-6.
//
// Runs ATen foreach ops (foreach_adadelta.h).
#include <memory>

#include "foreach_adadelta.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using orchestrate::OptimizerContext;
using orchestrate::Params;
using orchestrate::optimizers::AdadeltaOptions;

std::unique_ptr<torch::optim::Optimizer> make_adadelta(const Params& params, const OptimizerContext& context) {
  const auto options = AdadeltaOptions(params.real("lr")).rho(params.real("rho")).eps(params.real("eps"));
  return std::make_unique<orchestrate::optimizers::ForeachAdadelta>(orchestrate::make_param_groups(context, options),
                                                                    options);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("lr", 0.01,
                 "scales the Adadelta step; the schedule scales from it. FastNN's learning_rate default, which suits "
                 "eps = 1.0 (early steps are about lr * g); Zeiler's rule and PyTorch's default are lr 1.0 with "
                 "eps 1e-6")
          .greater_than(0)
          .with_role(orchestrate::ParamRole::learning_rate),
      real_param("rho", 0.95, "decay rate of the running means: FastNN's adadelta_rho (PyTorch's default is 0.9)")
          .between(0, 1),
      real_param("eps", 1.0,
                 "added inside both square roots: FastNN's opt_epsilon (TF-slim's default); Zeiler and PyTorch use "
                 "1e-6. It also sets the first steps' size: sqrt(eps) / sqrt(ms + eps) * g")
          .greater_than(0),
  };
  registry.optimizers().add("adadelta", "Adadelta with FastNN's defaults (foreach kernels)", std::move(schema),
                            make_adadelta);
}

}  // namespace

ORCHESTRATE_PLUGIN("adadelta", "1.0.0", register_components)

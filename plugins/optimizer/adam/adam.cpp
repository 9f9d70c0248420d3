// Adam (Kingma and Ba, 2015), optionally AMSGrad, with FastNN's defaults.
// The host's weight decay is the classic L2 term added to the gradient, as
// torch.optim.Adam applies it; for decoupled decay use `adamw`.
//
// Runs ATen's fused kernel (at::_fused_adam_, CPU and CUDA): one call per
// param group instead of one chain of kernels per parameter.
#include <torch/optim/adam.h>

#include <memory>
#include <tuple>

#include "../common/fused_adam.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using orchestrate::OptimizerContext;
using orchestrate::Params;

std::unique_ptr<torch::optim::Optimizer> make_adam(const Params& params, const OptimizerContext& context) {
  const auto options = torch::optim::AdamOptions(params.real("lr"))
                           .betas(std::make_tuple(params.real("beta1"), params.real("beta2")))
                           .eps(params.real("eps"))
                           .amsgrad(params.boolean("amsgrad"));
  return std::make_unique<orchestrate::optimizers::FusedAdam>(orchestrate::make_param_groups(context, options),
                                                              options);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("lr", 0.01,
                 "base learning rate; the schedule scales from it. FastNN's learning_rate default (PyTorch's is 0.001)")
          .greater_than(0)
          .with_role(orchestrate::ParamRole::learning_rate),
      real_param("beta1", 0.9, "decay rate of the running mean of gradients").at_least(0).less_than(1),
      real_param("beta2", 0.999, "decay rate of the running mean of squared gradients").at_least(0).less_than(1),
      real_param("eps", 1.0,
                 "added to the denominator sqrt(v) + eps. 1.0 is FastNN's opt_epsilon (TF-slim's default); PyTorch's "
                 "default is 1e-8, which makes early steps close to lr * sign(g)")
          .at_least(0),
      bool_param("amsgrad", false, "use the AMSGrad variant (maximum of past squared-gradient averages)"),
  };
  registry.optimizers().add("adam", "Adam, optionally AMSGrad (fused kernel)", std::move(schema), make_adam);
}

}  // namespace

ORCHESTRATE_PLUGIN("adam", "2.0.0", register_components)

// Adagrad (Duchi et al., 2011) with FastNN's initial accumulator of 0.1:
//   sum += g^2;  w -= lr * g / (sqrt(sum) + eps)
// The host's weight decay is the L2 term torch.optim.Adagrad adds to the
// gradient. lr_decay is left at 0: the schedule owns the lr.
//
// Runs ATen's fused kernel (fused_adagrad.h).
#include <torch/optim/adagrad.h>

#include <memory>

#include "fused_adagrad.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using orchestrate::OptimizerContext;
using orchestrate::Params;

std::unique_ptr<torch::optim::Optimizer> make_adagrad(const Params& params, const OptimizerContext& context) {
  const auto options = torch::optim::AdagradOptions(params.real("lr"))
                           .initial_accumulator_value(params.real("initial_accumulator_value"))
                           .eps(params.real("eps"));
  return std::make_unique<orchestrate::optimizers::FusedAdagrad>(orchestrate::make_param_groups(context, options),
                                                                 options);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("lr", 0.01, "base learning rate (FastNN's learning_rate default); the schedule scales from it")
          .greater_than(0)
          .with_role(orchestrate::ParamRole::learning_rate),
      real_param("initial_accumulator_value", 0.1,
                 "starting value of the sum of squared gradients (FastNN's and TensorFlow's default; PyTorch's is 0)")
          .at_least(0),
      real_param("eps", 1e-10,
                 "added to the denominator sqrt(sum) + eps (PyTorch's default; TensorFlow's Adagrad has none and "
                 "relies on the initial accumulator)")
          .at_least(0),
  };
  registry.optimizers().add("adagrad", "Adagrad (fused kernel)", std::move(schema), make_adagrad);
}

}  // namespace

ORCHESTRATE_PLUGIN("adagrad", "1.0.0", register_components)

// Adam with decoupled weight decay, two components:
//   adamw            Loshchilov and Hutter's AdamW as torch.optim.AdamW
//                    computes it (bias-corrected; w *= 1 - lr * weight_decay),
//                    on ATen's fused kernel (at::_fused_adamw_, CPU and CUDA);
//   adamweightdecay  FastNN's optimizer of that name, BERT's
//                    AdamWeightDecayOptimizer (no bias correction, eps 1e-6),
//                    on ATen foreach ops (adam_weight_decay.h).
// Both take the host's per-group weight decay as the decoupled coefficient:
// the host's no-decay group (biases, norms) is BERT's exclude_from_weight_decay.
#include <torch/optim/adamw.h>

#include <memory>
#include <tuple>

#include "../common/fused_adam.h"
#include "adam_weight_decay.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using orchestrate::OptimizerContext;
using orchestrate::Params;

torch::optim::AdamWOptions adamw_options(const Params& params) {
  return torch::optim::AdamWOptions(params.real("lr"))
      .betas(std::make_tuple(params.real("beta1"), params.real("beta2")))
      .eps(params.real("eps"))
      .weight_decay(0.0);  // each group gets its own from the context
}

std::unique_ptr<torch::optim::Optimizer> make_adamw(const Params& params, const OptimizerContext& context) {
  const auto options = adamw_options(params).amsgrad(params.boolean("amsgrad"));
  return std::make_unique<orchestrate::optimizers::FusedAdamW>(orchestrate::make_param_groups(context, options),
                                                               options);
}

std::unique_ptr<torch::optim::Optimizer> make_adam_weight_decay(const Params& params,
                                                                const OptimizerContext& context) {
  const auto options = adamw_options(params);
  return std::make_unique<orchestrate::optimizers::BertAdamWeightDecay>(
      orchestrate::make_param_groups(context, options), options);
}

orchestrate::ParamSchema adam_betas_and_eps(double lr, const char* lr_doc, double eps, const char* eps_doc) {
  using namespace orchestrate;
  return ParamSchema{
      real_param("lr", lr, lr_doc).greater_than(0).with_role(orchestrate::ParamRole::learning_rate),
      real_param("beta1", 0.9, "decay rate of the running mean of gradients").at_least(0).less_than(1),
      real_param("beta2", 0.999, "decay rate of the running mean of squared gradients").at_least(0).less_than(1),
      real_param("eps", eps, eps_doc).at_least(0),
  };
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  auto adamw = adam_betas_and_eps(
      0.001,
      "base learning rate; the schedule scales from it. PyTorch's AdamW default (FastNN has no adamw, so its "
      "learning_rate of 0.01 does not apply)",
      1e-8, "added to the denominator sqrt(v) + eps (PyTorch's default)");
  adamw.add(bool_param("amsgrad", false, "use the AMSGrad variant (maximum of past squared-gradient averages)"));
  registry.optimizers().add("adamw", "AdamW: Adam with decoupled weight decay (fused kernel)", std::move(adamw),
                            make_adamw);

  auto bert = adam_betas_and_eps(
      0.01, "base learning rate; the schedule scales from it. FastNN's learning_rate default (BERT pre-trained at 1e-4)",
      1e-6, "added to the denominator sqrt(v) + eps (BERT's default)");
  registry.optimizers().add("adamweightdecay",
                            "BERT's AdamWeightDecay: decoupled weight decay, no bias correction (FastNN)",
                            std::move(bert), make_adam_weight_decay);
}

}  // namespace

ORCHESTRATE_PLUGIN("adamw", "1.0.0", register_components)

// Adam (Kingma and Ba, 2015), optionally AMSGrad; weight decay is the
// classic L2 term added to the gradient, not AdamW's decoupled decay.
#include <torch/optim/adam.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using orchestrate::Params;

std::unique_ptr<torch::optim::Optimizer> make_adam(const Params& params, std::vector<at::Tensor> parameters) {
  const auto options = torch::optim::AdamOptions(params.real("lr"))
                           .betas(std::make_tuple(params.real("beta1"), params.real("beta2")))
                           .eps(params.real("eps"))
                           .weight_decay(params.real("weight_decay"))
                           .amsgrad(params.boolean("amsgrad"));
  return std::make_unique<torch::optim::Adam>(std::move(parameters), options);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("lr", 0.001, "base learning rate; the schedule scales from it").greater_than(0),
      real_param("beta1", 0.9, "decay rate of the running mean of gradients").at_least(0).less_than(1),
      real_param("beta2", 0.999, "decay rate of the running mean of squared gradients").at_least(0).less_than(1),
      real_param("eps", 1e-8, "added to the denominator for numerical stability").at_least(0),
      real_param("weight_decay", 0.0, "L2 penalty: weight_decay * w is added to each gradient").at_least(0),
      bool_param("amsgrad", false, "use the AMSGrad variant (maximum of past squared-gradient averages)"),
  };
  registry.optimizers().add("adam", "Adam, optionally AMSGrad", std::move(schema), make_adam);
}

}  // namespace

ORCHESTRATE_PLUGIN("adam", "1.0.0", register_components)

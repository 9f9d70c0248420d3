// An optimizer from a third party that cannot skip an update on the device:
// LibTorch's own SGD, without orchestrate::SkipsOnDevice. The host must read
// each fp16 update's inf/nan check before stepping it, and say which plugin
// made it wait (host_checked_optimizer_test.cpp). Every built-in optimizer
// skips on the device, so none can stand in for it.
#include <torch/optim/sgd.h>

#include <memory>

#include "orchestrate/optimizer.h"
#include "orchestrate/plugin.h"

namespace {

std::unique_ptr<torch::optim::Optimizer> make_sgd(const orchestrate::Params& params,
                                                  const orchestrate::OptimizerContext& context) {
  const torch::optim::SGDOptions options(params.real("lr"));
  return std::make_unique<torch::optim::SGD>(orchestrate::make_param_groups(context, options), options);
}

void register_components(orchestrate::Registry& registry) {
  registry.optimizers().add("torch_sgd", "LibTorch's torch::optim::SGD, which cannot skip on the device",
                            {orchestrate::real_param("lr", 0.01, "base learning rate")
                                 .greater_than(0)
                                 .with_role(orchestrate::ParamRole::learning_rate)},
                            make_sgd);
}

}  // namespace

ORCHESTRATE_PLUGIN("host_checked_optimizer", "1.0.0", register_components)

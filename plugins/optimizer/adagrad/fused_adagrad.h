// torch::optim::Adagrad whose step() is ATen's fused kernel
// (at::_fused_adagrad_): one call per param group instead of torch::optim's
// loop over parameters. The state stays torch's AdagradParamState (sum,
// step), so Adagrad::save()/load() still work; the kernel's float step
// tensors follow the saved int step (device_step_counts.h).
//
// libtorch 2.11 has the kernel for CPU and for CUDA (at::cuda::_fused_adagrad_),
// although torch.optim.Adagrad's Python front end still documents fused as
// CPU-only.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/adagrad.h>

#include <cstdint>
#include <vector>

#include "../common/device_step_counts.h"
#include "../common/step_inputs.h"

namespace orchestrate::optimizers {

class FusedAdagrad : public torch::optim::Adagrad {
 public:
  FusedAdagrad(const std::vector<torch::optim::OptimizerParamGroup>& groups, torch::optim::AdagradOptions defaults)
      : torch::optim::Adagrad(groups, defaults) {}

  torch::Tensor step(LossClosure closure = nullptr) override {
    at::NoGradGuard no_grad;
    auto loss = evaluate_closure(closure);
    for (auto& group : param_groups_) {
      const auto& options = static_cast<const torch::optim::AdagradOptions&>(group.options());
      const auto inputs = params_with_grads(group);
      if (inputs.empty()) continue;
      std::vector<at::Tensor> sums;
      std::vector<std::int64_t> steps_before;
      for (const auto& param : inputs.params) {
        // torch::optim::Adagrad's constructor makes every state; this covers a load() that lacks one.
        auto& state = lazy_state<torch::optim::AdagradParamState>(state_, param, [&](auto& fresh) {
          fresh.sum(at::full_like(param, options.initial_accumulator_value(), at::MemoryFormat::Preserve));
        });
        sums.push_back(state.sum());
        steps_before.push_back(state.step());
        state.step(state.step() + 1);
      }
      const auto steps = step_counts_.advance(inputs.params, steps_before);
      // Weight decay is torch's L2 term (weight_decay * w added to the gradient).
      at::_fused_adagrad_(inputs.params, inputs.grads, sums, steps, options.lr(), options.lr_decay(),
                          options.weight_decay(), options.eps(), /*maximize=*/false);
    }
    return loss;
  }

 private:
  DeviceStepCounts step_counts_;
};

}  // namespace orchestrate::optimizers

// torch::optim::SGD whose step() is ATen's fused kernel (at::_fused_sgd_):
// one call per param group instead of torch::optim's loop over parameters,
// which on a GPU launches several kernels per parameter. The state stays
// torch's SGDParamState (momentum_buffer), so SGD::save()/load() still work.
// The kernel runs on CPU and CUDA.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/sgd.h>

#include <vector>

#include "step_inputs.h"

namespace orchestrate::optimizers {

class FusedSgd : public torch::optim::SGD {
 public:
  FusedSgd(const std::vector<torch::optim::OptimizerParamGroup>& groups, torch::optim::SGDOptions defaults)
      : torch::optim::SGD(groups, defaults) {}

  torch::Tensor step(LossClosure closure = nullptr) override {
    at::NoGradGuard no_grad;
    auto loss = evaluate_closure(closure);
    for (auto& group : param_groups_) {
      const auto& options = static_cast<const torch::optim::SGDOptions&>(group.options());
      const auto inputs = params_with_grads(group);
      if (inputs.empty()) continue;
      if (options.momentum() == 0) {
        apply(options, inputs, {}, /*is_first_step=*/false);
        continue;
      }
      // torch starts a momentum buffer as a copy of the first gradient; the
      // kernel does that for a whole list (is_first_step), so parameters that
      // already have a buffer and parameters starting now go in separate calls.
      StepInputs continuing, starting;
      std::vector<at::Tensor> continuing_buffers, starting_buffers;
      for (std::size_t i = 0; i < inputs.params.size(); ++i) {
        auto& state = lazy_state<torch::optim::SGDParamState>(state_, inputs.params[i], [](auto&) {});
        const bool first = !state.momentum_buffer().defined();
        if (first) state.momentum_buffer(at::empty_like(inputs.grads[i]));
        auto& part = first ? starting : continuing;
        part.params.push_back(inputs.params[i]);
        part.grads.push_back(inputs.grads[i]);
        (first ? starting_buffers : continuing_buffers).push_back(state.momentum_buffer());
      }
      if (!continuing.empty()) apply(options, continuing, continuing_buffers, /*is_first_step=*/false);
      if (!starting.empty()) apply(options, starting, starting_buffers, /*is_first_step=*/true);
    }
    return loss;
  }

 private:
  // Weight decay is torch's L2 term (weight_decay * w added to the gradient).
  static void apply(const torch::optim::SGDOptions& options, const StepInputs& inputs,
                    const std::vector<at::Tensor>& momentum_buffers, bool is_first_step) {
    at::_fused_sgd_(inputs.params, inputs.grads, momentum_buffers, options.weight_decay(), options.momentum(),
                    options.lr(), options.dampening(), options.nesterov(), /*maximize=*/false, is_first_step);
  }
};

}  // namespace orchestrate::optimizers

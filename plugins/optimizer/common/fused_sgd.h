// torch::optim::SGD whose step() is ATen's fused kernel (at::_fused_sgd_):
// one call per param group instead of torch::optim's loop over parameters,
// which on a GPU launches several kernels per parameter. The state stays
// torch's SGDParamState (momentum_buffer), so SGD::save()/load() still work.
// The kernel runs on CPU and CUDA.
//
// It skips a step on the device (SkipsOnDevice): the kernel takes the host's
// found_inf flag.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/sgd.h>

#include <optional>
#include <vector>

#include "armed_skip.h"
#include "orchestrate/optimizer.h"
#include "step_inputs.h"

namespace orchestrate::optimizers {

class FusedSgd : public torch::optim::SGD, public SkipsOnDevice {
 public:
  FusedSgd(const std::vector<torch::optim::OptimizerParamGroup>& groups, torch::optim::SGDOptions defaults)
      : torch::optim::SGD(groups, defaults) {}

  void skip_next_step_if(const at::Tensor& found_inf) override { skip_.arm(found_inf); }

  torch::Tensor step(LossClosure closure = nullptr) override {
    at::NoGradGuard no_grad;
    auto loss = evaluate_closure(closure);
    const auto found_inf = skip_.take();
    for (auto& group : param_groups_) {
      const auto& options = static_cast<const torch::optim::SGDOptions&>(group.options());
      const auto inputs = params_with_grads(group);
      if (inputs.empty()) continue;
      if (options.momentum() == 0) {
        apply(options, inputs, {}, /*is_first_step=*/false, found_inf);
        continue;
      }
      // torch starts a momentum buffer as a copy of the first gradient; the
      // kernel does that for a whole list (is_first_step), so parameters that
      // already have a buffer and parameters starting now go in separate calls.
      StepInputs continuing, starting;
      std::vector<at::Tensor> continuing_buffers;
      for (std::size_t i = 0; i < inputs.params.size(); ++i) {
        const auto it = state_.find(inputs.params[i].unsafeGetTensorImpl());
        const bool started = it != state_.end() &&
                             static_cast<torch::optim::SGDParamState&>(*it->second).momentum_buffer().defined();
        auto& part = started ? continuing : starting;
        part.params.push_back(inputs.params[i]);
        part.grads.push_back(inputs.grads[i]);
        if (started)
          continuing_buffers.push_back(static_cast<torch::optim::SGDParamState&>(*it->second).momentum_buffer());
      }
      if (!continuing.empty()) apply(options, continuing, continuing_buffers, /*is_first_step=*/false, found_inf);
      if (!starting.empty() && !skipped_on_the_host(options, found_inf)) {
        std::vector<at::Tensor> starting_buffers;
        for (std::size_t i = 0; i < starting.params.size(); ++i) {
          auto& state = lazy_state<torch::optim::SGDParamState>(state_, starting.params[i], [](auto&) {});
          // Zeros, not uninitialised memory: a step skipped on the device leaves them as they are.
          state.momentum_buffer(at::zeros_like(starting.grads[i]));
          starting_buffers.push_back(state.momentum_buffer());
        }
        apply(options, starting, starting_buffers, /*is_first_step=*/true, found_inf);
      }
    }
    return loss;
  }

 private:
  // A buffer the kernel would start on a skipped step is left as it was (the
  // kernel returns before touching anything): zeros, which the next step
  // takes as momentum, momentum * 0 + (1 - dampening) * g. Without
  // dampening that is g, the copy torch starts a buffer with, so nothing
  // waits for the device. With dampening it is not, and a parameter's first
  // step reads the flag on the host instead: one sync, on that step only.
  static bool skipped_on_the_host(const torch::optim::SGDOptions& options,
                                  const std::optional<at::Tensor>& found_inf) {
    return found_inf && options.dampening() != 0 && found_inf->item<double>() != 0;
  }

  // Weight decay is torch's L2 term (weight_decay * w added to the gradient).
  static void apply(const torch::optim::SGDOptions& options, const StepInputs& inputs,
                    const std::vector<at::Tensor>& momentum_buffers, bool is_first_step,
                    const std::optional<at::Tensor>& found_inf) {
    at::_fused_sgd_(inputs.params, inputs.grads, momentum_buffers, options.weight_decay(), options.momentum(),
                    options.lr(), options.dampening(), options.nesterov(), /*maximize=*/false, is_first_step,
                    /*grad_scale=*/std::nullopt, found_inf);
  }

  ArmedSkip skip_;
};

}  // namespace orchestrate::optimizers

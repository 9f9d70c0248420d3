// torch::optim::Adam and AdamW whose step() is ATen's fused kernel
// (at::_fused_adam_ / at::_fused_adamw_): one call per param group instead
// of torch::optim's loop over parameters. The state stays torch's
// AdamParamState / AdamWParamState (step, exp_avg, exp_avg_sq,
// max_exp_avg_sq), so the base class's save()/load() still work; the
// kernel's float step tensors follow the saved int step (device_step_counts.h).
// Both kernels run on CPU and CUDA.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

#include "device_step_counts.h"
#include "step_inputs.h"

namespace orchestrate::optimizers {

// `TorchAdam` is torch::optim::Adam (weight decay as an L2 gradient term) or
// torch::optim::AdamW (decoupled: w *= 1 - lr * weight_decay).
template <class TorchAdam, class Options, class State>
class FusedAdamFamily : public TorchAdam {
 public:
  FusedAdamFamily(const std::vector<torch::optim::OptimizerParamGroup>& groups, Options defaults)
      : TorchAdam(groups, defaults) {}

  torch::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) override {
    at::NoGradGuard no_grad;
    auto loss = evaluate_closure(closure);
    for (auto& group : this->param_groups_) {
      const auto& options = static_cast<const Options&>(group.options());
      const auto inputs = params_with_grads(group);
      if (inputs.empty()) continue;
      std::vector<at::Tensor> exp_avgs, exp_avg_sqs, max_exp_avg_sqs;
      std::vector<std::int64_t> steps_before;
      for (const auto& param : inputs.params) {
        auto& state = lazy_state<State>(this->state_, param, [&](State& fresh) {
          fresh.exp_avg(zeros_like_param(param));
          fresh.exp_avg_sq(zeros_like_param(param));
        });
        exp_avgs.push_back(state.exp_avg());
        exp_avg_sqs.push_back(state.exp_avg_sq());
        if (options.amsgrad()) {
          if (!state.max_exp_avg_sq().defined()) state.max_exp_avg_sq(zeros_like_param(param));
          max_exp_avg_sqs.push_back(state.max_exp_avg_sq());
        }
        steps_before.push_back(state.step());
        state.step(state.step() + 1);
      }
      const auto steps = step_counts_.advance(inputs.params, steps_before);
      const auto [beta1, beta2] = options.betas();
      if constexpr (std::is_same_v<TorchAdam, torch::optim::AdamW>)
        at::_fused_adamw_(inputs.params, inputs.grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, options.lr(), beta1,
                          beta2, options.weight_decay(), options.eps(), options.amsgrad(), /*maximize=*/false);
      else
        at::_fused_adam_(inputs.params, inputs.grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, options.lr(), beta1,
                         beta2, options.weight_decay(), options.eps(), options.amsgrad(), /*maximize=*/false);
    }
    return loss;
  }

 private:
  DeviceStepCounts step_counts_;
};

using FusedAdam = FusedAdamFamily<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState>;
using FusedAdamW = FusedAdamFamily<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState>;

}  // namespace orchestrate::optimizers

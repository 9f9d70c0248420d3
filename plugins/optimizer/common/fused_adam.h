// torch::optim::Adam and AdamW whose step() is ATen's fused kernel
// (at::_fused_adam_ / at::_fused_adamw_): one call per param group instead
// of torch::optim's loop over parameters. The state stays torch's
// AdamParamState / AdamWParamState (step, exp_avg, exp_avg_sq,
// max_exp_avg_sq), so the base class's save()/load() still work; the
// kernel's float step tensors follow the saved int step (device_step_counts.h).
// Both kernels run on CPU and CUDA, and skip a step on the device
// (SkipsOnDevice): they take the host's found_inf flag.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/serialize/archive.h>
#include <torch/optim/adamw.h>

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

#include "armed_skip.h"
#include "device_step_counts.h"
#include "orchestrate/optimizer.h"
#include "step_inputs.h"

namespace orchestrate::optimizers {

// `TorchAdam` is torch::optim::Adam (weight decay as an L2 gradient term) or
// torch::optim::AdamW (decoupled: w *= 1 - lr * weight_decay).
template <class TorchAdam, class Options, class State>
class FusedAdamFamily : public TorchAdam, public SkipsOnDevice {
 public:
  FusedAdamFamily(const std::vector<torch::optim::OptimizerParamGroup>& groups, Options defaults)
      : TorchAdam(groups, defaults) {}

  void skip_next_step_if(const at::Tensor& found_inf) override { skip_.arm(found_inf); }

  // The saved step counts are the kernel's: a step skipped on the device is not one.
  void save(torch::serialize::OutputArchive& archive) const override {
    step_counts_.template write_back<State>(this->state_);
    TorchAdam::save(archive);
  }
  void load(torch::serialize::InputArchive& archive) override {
    TorchAdam::load(archive);
    step_counts_.forget();
  }

  torch::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) override {
    at::NoGradGuard no_grad;
    auto loss = evaluate_closure(closure);
    const auto found_inf = skip_.take();
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
                          beta2, options.weight_decay(), options.eps(), options.amsgrad(), /*maximize=*/false,
                          /*grad_scale=*/std::nullopt, found_inf);
      else
        at::_fused_adam_(inputs.params, inputs.grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, options.lr(), beta1,
                         beta2, options.weight_decay(), options.eps(), options.amsgrad(), /*maximize=*/false,
                         /*grad_scale=*/std::nullopt, found_inf);
      if (found_inf) step_counts_.take_back_if(steps, *found_inf);
    }
    return loss;
  }

 private:
  mutable DeviceStepCounts step_counts_;  // save() settles the host counts with it
  ArmedSkip skip_;
};

using FusedAdam = FusedAdamFamily<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState>;
using FusedAdamW = FusedAdamFamily<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState>;

}  // namespace orchestrate::optimizers

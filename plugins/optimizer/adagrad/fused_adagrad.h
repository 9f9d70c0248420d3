// torch::optim::Adagrad whose step() is ATen's fused kernel
// (at::_fused_adagrad_): one call per param group instead of torch::optim's
// loop over parameters. The state stays torch's AdagradParamState (sum,
// step), so Adagrad::save()/load() still work; the kernel's float step
// tensors follow the saved int step (device_step_counts.h).
//
// libtorch 2.11 has the kernel for CPU and for CUDA (at::cuda::_fused_adagrad_),
// although torch.optim.Adagrad's Python front end still documents fused as
// CPU-only. It skips a step on the device (SkipsOnDevice): the kernel takes
// the host's found_inf flag.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/adagrad.h>
#include <torch/serialize/archive.h>

#include <cstdint>
#include <vector>

#include "../common/armed_skip.h"
#include "../common/device_step_counts.h"
#include "../common/step_inputs.h"
#include "orchestrate/optimizer.h"

namespace orchestrate::optimizers {

class FusedAdagrad : public torch::optim::Adagrad, public SkipsOnDevice {
 public:
  FusedAdagrad(const std::vector<torch::optim::OptimizerParamGroup>& groups, torch::optim::AdagradOptions defaults)
      : torch::optim::Adagrad(groups, defaults) {}

  void skip_next_step_if(const at::Tensor& found_inf) override { skip_.arm(found_inf); }

  // The saved step counts are the kernel's: a step skipped on the device is not one.
  void save(torch::serialize::OutputArchive& archive) const override {
    step_counts_.write_back<torch::optim::AdagradParamState>(state_);
    torch::optim::Adagrad::save(archive);
  }
  void load(torch::serialize::InputArchive& archive) override {
    torch::optim::Adagrad::load(archive);
    step_counts_.forget();
  }

  torch::Tensor step(LossClosure closure = nullptr) override {
    at::NoGradGuard no_grad;
    auto loss = evaluate_closure(closure);
    const auto found_inf = skip_.take();
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
                          options.weight_decay(), options.eps(), /*maximize=*/false, /*grad_scale=*/std::nullopt,
                          found_inf);
      if (found_inf) step_counts_.take_back_if(steps, *found_inf);
    }
    return loss;
  }

 private:
  mutable DeviceStepCounts step_counts_;  // save() settles the host counts with it
  ArmedSkip skip_;
};

}  // namespace orchestrate::optimizers

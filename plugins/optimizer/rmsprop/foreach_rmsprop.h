// torch::optim::RMSprop whose step() is ATen foreach ops, op for op
// torch.optim.RMSprop's multi-tensor path: a fixed handful of launches per
// param group instead of torch::optim's chain per parameter (ATen has no
// fused RMSprop kernel). CPU and CUDA. The state stays torch's
// RMSpropParamState (step, square_avg, momentum_buffer, grad_avg), so
// RMSprop::save()/load() still work. It skips a step without waiting for
// the device (SkipsOnDevice): on a GPU by undoing it
// (undoes_skipped_steps.h). Saved step counts leave skipped steps out.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/rmsprop.h>

#include <vector>

#include "../common/step_inputs.h"
#include "../common/undoes_skipped_steps.h"

namespace orchestrate::optimizers {

class ForeachRmsprop : public torch::optim::RMSprop, public UndoesSkippedSteps {
 public:
  ForeachRmsprop(const std::vector<torch::optim::OptimizerParamGroup>& groups, torch::optim::RMSpropOptions defaults)
      : torch::optim::RMSprop(groups, defaults) {}

  void save(torch::serialize::OutputArchive& archive) const override {
    step_counts_.write_back<torch::optim::RMSpropParamState>(state_);
    torch::optim::RMSprop::save(archive);
  }
  void load(torch::serialize::InputArchive& archive) override {
    torch::optim::RMSprop::load(archive);
    step_counts_.forget();
  }

  torch::Tensor step(LossClosure closure = nullptr) override {
    at::NoGradGuard no_grad;
    auto loss = evaluate_closure(closure);
    const auto skip = take_skip();
    if (skip.skip_outright) return loss;
    for (auto& group : param_groups_) {
      const auto& options = static_cast<const torch::optim::RMSpropOptions&>(group.options());
      const auto inputs = params_with_grads(group);
      if (inputs.empty()) continue;
      std::vector<at::Tensor> square_avgs, momentum_buffers, grad_avgs;
      std::vector<std::int64_t> steps_before;
      for (const auto& param : inputs.params) {
        auto& state = lazy_state<torch::optim::RMSpropParamState>(
            state_, param, [&](auto& fresh) { fresh.square_avg(zeros_like_param(param)); });
        if (options.momentum() > 0 && !state.momentum_buffer().defined())
          state.momentum_buffer(zeros_like_param(param));
        if (options.centered() && !state.grad_avg().defined()) state.grad_avg(zeros_like_param(param));
        square_avgs.push_back(state.square_avg());
        if (options.momentum() > 0) momentum_buffers.push_back(state.momentum_buffer());
        if (options.centered()) grad_avgs.push_back(state.grad_avg());
        steps_before.push_back(state.step());
        state.step(state.step() + 1);
      }
      const TensorLists written{inputs.params, square_avgs, momentum_buffers, grad_avgs};
      auto undo = undo_group(skip, inputs.params, steps_before, written);
      const double alpha = options.alpha();
      auto grads = inputs.grads;
      // Weight decay is torch's L2 term (weight_decay * w added to the gradient).
      if (options.weight_decay() != 0) grads = at::_foreach_add(grads, inputs.params, options.weight_decay());
      at::_foreach_mul_(square_avgs, alpha);
      at::_foreach_addcmul_(square_avgs, grads, grads, 1 - alpha);
      std::vector<at::Tensor> denominators;
      if (options.centered()) {
        at::_foreach_lerp_(grad_avgs, grads, 1 - alpha);
        denominators = at::_foreach_addcmul(square_avgs, grad_avgs, grad_avgs, -1);
        at::_foreach_sqrt_(denominators);
      } else {
        denominators = at::_foreach_sqrt(square_avgs);
      }
      at::_foreach_add_(denominators, options.eps());
      if (options.momentum() > 0) {
        at::_foreach_mul_(momentum_buffers, options.momentum());
        at::_foreach_addcdiv_(momentum_buffers, grads, denominators);
        at::_foreach_add_(inputs.params, momentum_buffers, -options.lr());
      } else {
        at::_foreach_addcdiv_(inputs.params, grads, denominators, -options.lr());
      }
      undo.finish(written);
    }
    return loss;
  }
};

}  // namespace orchestrate::optimizers

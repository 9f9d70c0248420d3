// BERT's AdamWeightDecayOptimizer (google-research/bert, optimization.py),
// FastNN's "adamweightdecay":
//
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g^2
//   w -= lr * (m / (sqrt(v) + eps) + weight_decay * w)
//
// Decoupled weight decay like AdamW, but without Adam's bias correction, so
// it is not torch.optim.AdamW with other defaults: early steps are smaller
// (m starts at (1 - beta1) * g). No fused kernel computes this, so step()
// is ATen foreach ops, a fixed handful of launches per param group (CPU and
// CUDA). The state is torch's AdamWParamState (step counts updates; the rule
// does not use it), so torch::optim::AdamW's save()/load() apply. It skips
// a step without waiting for the device (SkipsOnDevice): on a GPU by
// undoing it (undoes_skipped_steps.h). Saved step counts leave skipped
// steps out.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/adamw.h>

#include <vector>

#include "../common/step_inputs.h"
#include "../common/undoes_skipped_steps.h"

namespace orchestrate::optimizers {

class BertAdamWeightDecay : public torch::optim::AdamW, public UndoesSkippedSteps {
 public:
  BertAdamWeightDecay(const std::vector<torch::optim::OptimizerParamGroup>& groups,
                      torch::optim::AdamWOptions defaults)
      : torch::optim::AdamW(groups, defaults) {}

  void save(torch::serialize::OutputArchive& archive) const override {
    step_counts_.write_back<torch::optim::AdamWParamState>(state_);
    torch::optim::AdamW::save(archive);
  }
  void load(torch::serialize::InputArchive& archive) override {
    torch::optim::AdamW::load(archive);
    step_counts_.forget();
  }

  torch::Tensor step(LossClosure closure = nullptr) override {
    at::NoGradGuard no_grad;
    auto loss = evaluate_closure(closure);
    const auto skip = take_skip();
    if (skip.skip_outright) return loss;
    for (auto& group : param_groups_) {
      const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
      const auto inputs = params_with_grads(group);
      if (inputs.empty()) continue;
      std::vector<at::Tensor> means, squares;
      std::vector<std::int64_t> steps_before;
      for (const auto& param : inputs.params) {
        auto& state = lazy_state<torch::optim::AdamWParamState>(state_, param, [&](auto& fresh) {
          fresh.exp_avg(zeros_like_param(param));
          fresh.exp_avg_sq(zeros_like_param(param));
        });
        means.push_back(state.exp_avg());
        squares.push_back(state.exp_avg_sq());
        steps_before.push_back(state.step());
        state.step(state.step() + 1);
      }
      auto undo = undo_group(skip, inputs.params, steps_before, {inputs.params, means, squares});
      const auto [beta1, beta2] = options.betas();
      at::_foreach_mul_(means, beta1);
      at::_foreach_add_(means, inputs.grads, 1 - beta1);
      at::_foreach_mul_(squares, beta2);
      at::_foreach_addcmul_(squares, inputs.grads, inputs.grads, 1 - beta2);
      auto updates = at::_foreach_sqrt(squares);
      at::_foreach_add_(updates, options.eps());
      updates = at::_foreach_div(means, updates);
      if (options.weight_decay() != 0) at::_foreach_add_(updates, inputs.params, options.weight_decay());
      at::_foreach_add_(inputs.params, updates, -options.lr());
      undo.finish({inputs.params, means, squares});
    }
    return loss;
  }
};

}  // namespace orchestrate::optimizers

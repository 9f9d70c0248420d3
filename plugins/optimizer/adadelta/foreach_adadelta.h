// Adadelta as a torch::optim::Optimizer (LibTorch's C++ API has none), its
// step() ATen foreach ops, op for op torch.optim.Adadelta's multi-tensor
// path: a fixed handful of launches per param group, CPU and CUDA. Options
// and state mirror torch.optim.Adadelta's (square_avg, acc_delta, step) and
// serialize through torch/optim/serialize.h like LibTorch's own optimizers.
// It skips a step without waiting for the device (SkipsOnDevice): on a GPU
// by undoing it (undoes_skipped_steps.h). Saved step counts leave skipped
// steps out.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/serialize.h>
#include <torch/serialize/archive.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "../common/step_inputs.h"
#include "../common/undoes_skipped_steps.h"

namespace orchestrate::optimizers {

struct AdadeltaOptions : public torch::optim::OptimizerCloneableOptions<AdadeltaOptions> {
  AdadeltaOptions(double lr = 1.0) : lr_(lr) {}  // implicit from a number, as torch's load() needs
  TORCH_ARG(double, lr) = 1.0;
  TORCH_ARG(double, rho) = 0.9;
  TORCH_ARG(double, eps) = 1e-6;
  TORCH_ARG(double, weight_decay) = 0;

 public:
  void serialize(torch::serialize::OutputArchive& archive) const override {
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(rho);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(eps);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
  }
  void serialize(torch::serialize::InputArchive& archive) override {
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, rho);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, eps);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
  }
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};

struct AdadeltaParamState : public torch::optim::OptimizerCloneableParamState<AdadeltaParamState> {
  TORCH_ARG(std::int64_t, step) = 0;
  TORCH_ARG(at::Tensor, square_avg);  // running mean of g^2
  TORCH_ARG(at::Tensor, acc_delta);   // running mean of the squared updates

 public:
  void serialize(torch::serialize::OutputArchive& archive) const override {
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(step);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(square_avg);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(acc_delta);
  }
  void serialize(torch::serialize::InputArchive& archive) override {
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(std::int64_t, step);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(at::Tensor, square_avg);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(at::Tensor, acc_delta);
  }
};

class ForeachAdadelta : public torch::optim::Optimizer, public UndoesSkippedSteps {
 public:
  ForeachAdadelta(const std::vector<torch::optim::OptimizerParamGroup>& groups, AdadeltaOptions defaults)
      : torch::optim::Optimizer(groups, std::make_unique<AdadeltaOptions>(defaults)) {}

  torch::Tensor step(LossClosure closure = nullptr) override {
    at::NoGradGuard no_grad;
    auto loss = evaluate_closure(closure);
    const auto skip = take_skip();
    if (skip.skip_outright) return loss;
    for (auto& group : param_groups_) {
      const auto& options = static_cast<const AdadeltaOptions&>(group.options());
      const auto inputs = params_with_grads(group);
      if (inputs.empty()) continue;
      std::vector<at::Tensor> square_avgs, acc_deltas;
      std::vector<std::int64_t> steps_before;
      for (const auto& param : inputs.params) {
        auto& state = lazy_state<AdadeltaParamState>(state_, param, [&](auto& fresh) {
          fresh.square_avg(zeros_like_param(param));
          fresh.acc_delta(zeros_like_param(param));
        });
        square_avgs.push_back(state.square_avg());
        acc_deltas.push_back(state.acc_delta());
        steps_before.push_back(state.step());
        state.step(state.step() + 1);
      }
      auto undo = undo_group(skip, inputs.params, steps_before, {inputs.params, square_avgs, acc_deltas});
      const double rho = options.rho();
      auto grads = inputs.grads;
      // Weight decay is torch's L2 term (weight_decay * w added to the gradient).
      if (options.weight_decay() != 0) grads = at::_foreach_add(grads, inputs.params, options.weight_decay());
      // square_avg = rho * square_avg + (1 - rho) * g^2
      at::_foreach_mul_(square_avgs, rho);
      at::_foreach_addcmul_(square_avgs, grads, grads, 1 - rho);
      // delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g
      auto std_devs = at::_foreach_add(square_avgs, options.eps());
      at::_foreach_sqrt_(std_devs);
      auto deltas = at::_foreach_add(acc_deltas, options.eps());
      at::_foreach_sqrt_(deltas);
      at::_foreach_div_(deltas, std_devs);
      at::_foreach_mul_(deltas, grads);
      // acc_delta = rho * acc_delta + (1 - rho) * delta^2;  w -= lr * delta
      at::_foreach_mul_(acc_deltas, rho);
      at::_foreach_addcmul_(acc_deltas, deltas, deltas, 1 - rho);
      at::_foreach_add_(inputs.params, deltas, -options.lr());
      undo.finish({inputs.params, square_avgs, acc_deltas});
    }
    return loss;
  }

  void save(torch::serialize::OutputArchive& archive) const override {
    step_counts_.write_back<AdadeltaParamState>(state_);
    torch::optim::serialize<AdadeltaParamState, AdadeltaOptions>(archive, *this);
  }
  void load(torch::serialize::InputArchive& archive) override {
    torch::optim::serialize<AdadeltaParamState, AdadeltaOptions>(archive, *this);
    step_counts_.forget();
  }
};

}  // namespace orchestrate::optimizers

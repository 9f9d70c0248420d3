// FTRL-Proximal (McMahan et al., 2013) with TensorFlow's update rule, as a
// torch::optim::Optimizer: PyTorch has no FTRL.
//
// The rule, per element, from TensorFlow's ApplyFtrl (op documentation in
// tensorflow/core/ops/training_ops.cc, CPU functor ApplyFtrl<CPUDevice, T>
// in tensorflow/core/kernels/training_ops.cc), lr_power <= 0:
//
//   accum_new = accum + grad^2
//   linear   += grad - (accum_new^(-lr_power) - accum^(-lr_power)) / lr * var
//   quadratic = accum_new^(-lr_power) / lr + 2 * l2
//   var       = (sign(linear) * l1 - linear) / quadratic   if |linear| > l1
//             = 0                                           otherwise
//   accum     = accum_new
//
// (TF computes x^(-lr_power) as sqrt(x) when lr_power == -0.5; so does this.)
//
// Weight decay from the host is an L2 term added to the gradient first,
// grad = grad + weight_decay * w (the gradient of weight_decay / 2 * |w|^2),
// so the rule above runs unchanged on the regularised loss and decay enters
// both accum and linear, as the L2 decay of sgd, adam and rmsprop does.
// TF's own l2_shrinkage (ApplyFtrlV2) is not used: TF versions disagree on
// whether it enters the accumulator.
//
// TF requires lr > 0 and divides by it. A group whose lr is 0 (a schedule
// at zero, a frozen group) is skipped for that step, state included.
//
// step() is ATen foreach ops, a fixed number of launches per param group
// (CPU and CUDA). The select is computed as -sign(linear) *
// max(|linear| - l1, 0) / quadratic, which is the same value. Options and
// state (accum, linear, step) serialize through torch/optim/serialize.h.
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

struct FtrlOptions : public torch::optim::OptimizerCloneableOptions<FtrlOptions> {
  FtrlOptions(double lr = 0.01) : lr_(lr) {}  // implicit from a number, as torch's load() needs
  TORCH_ARG(double, lr) = 0.01;
  TORCH_ARG(double, lr_power) = -0.5;
  TORCH_ARG(double, initial_accumulator_value) = 0.1;
  TORCH_ARG(double, l1) = 0;
  TORCH_ARG(double, l2) = 0;
  TORCH_ARG(double, weight_decay) = 0;

 public:
  void serialize(torch::serialize::OutputArchive& archive) const override {
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr_power);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(initial_accumulator_value);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(l1);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(l2);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
  }
  void serialize(torch::serialize::InputArchive& archive) override {
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr_power);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, initial_accumulator_value);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, l1);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, l2);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
  }
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};

struct FtrlParamState : public torch::optim::OptimizerCloneableParamState<FtrlParamState> {
  TORCH_ARG(std::int64_t, step) = 0;
  TORCH_ARG(at::Tensor, accum);   // sum of squared gradients, from initial_accumulator_value
  TORCH_ARG(at::Tensor, linear);  // TF's "linear" (the paper's z)

 public:
  void serialize(torch::serialize::OutputArchive& archive) const override {
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(step);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(accum);
    _TORCH_OPTIM_SERIALIZE_TORCH_ARG(linear);
  }
  void serialize(torch::serialize::InputArchive& archive) override {
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(std::int64_t, step);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(at::Tensor, accum);
    _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(at::Tensor, linear);
  }
};

class ForeachFtrl : public torch::optim::Optimizer, public UndoesSkippedSteps {
 public:
  ForeachFtrl(const std::vector<torch::optim::OptimizerParamGroup>& groups, FtrlOptions defaults)
      : torch::optim::Optimizer(groups, std::make_unique<FtrlOptions>(defaults)) {}

  torch::Tensor step(LossClosure closure = nullptr) override {
    at::NoGradGuard no_grad;
    auto loss = evaluate_closure(closure);
    const auto skip = take_skip();
    if (skip.skip_outright) return loss;
    for (auto& group : param_groups_) {
      const auto& options = static_cast<const FtrlOptions&>(group.options());
      const auto inputs = params_with_grads(group);
      if (inputs.empty() || options.lr() == 0) continue;
      std::vector<FtrlParamState*> states;
      std::vector<at::Tensor> accums, linears;
      std::vector<std::int64_t> steps_before;
      for (const auto& param : inputs.params) {
        auto& state = lazy_state<FtrlParamState>(state_, param, [&](auto& fresh) {
          fresh.accum(at::full_like(param, options.initial_accumulator_value(), at::MemoryFormat::Preserve));
          fresh.linear(zeros_like_param(param));
        });
        states.push_back(&state);
        accums.push_back(state.accum());
        linears.push_back(state.linear());
        steps_before.push_back(state.step());
        state.step(state.step() + 1);
      }
      auto undo = undo_group(skip, inputs.params, steps_before, {inputs.params, linears, accums});
      const double lr = options.lr();
      auto grads = inputs.grads;
      if (options.weight_decay() != 0) grads = at::_foreach_add(grads, inputs.params, options.weight_decay());

      auto new_accums = at::_foreach_addcmul(accums, grads, grads);
      auto new_powers = power(new_accums, options.lr_power());
      // linear += grad - (new_power - old_power) / lr * var
      auto sigmas = at::_foreach_sub(new_powers, power(accums, options.lr_power()));
      at::_foreach_div_(sigmas, lr);
      at::_foreach_mul_(sigmas, inputs.params);
      at::_foreach_add_(linears, at::_foreach_sub(grads, sigmas));
      // quadratic = new_power / lr + 2 * l2
      auto& quadratics = new_powers;
      at::_foreach_div_(quadratics, lr);
      at::_foreach_add_(quadratics, 2 * options.l2());
      // var = -sign(linear) * max(|linear| - l1, 0) / quadratic
      auto shrunk = at::_foreach_abs(linears);
      at::_foreach_sub_(shrunk, options.l1());
      at::_foreach_clamp_min_(shrunk, 0);
      at::_foreach_mul_(shrunk, at::_foreach_sign(linears));
      at::_foreach_div_(shrunk, quadratics);
      at::_foreach_neg_(shrunk);
      at::_foreach_copy_(inputs.params, shrunk);
      // accum = accum_new: adopt the new tensors rather than copy them.
      for (std::size_t i = 0; i < states.size(); ++i) states[i]->accum(new_accums[i]);
      undo.finish({inputs.params, linears, new_accums});
    }
    return loss;
  }

  void save(torch::serialize::OutputArchive& archive) const override {
    step_counts_.write_back<FtrlParamState>(state_);
    torch::optim::serialize<FtrlParamState, FtrlOptions>(archive, *this);
  }
  void load(torch::serialize::InputArchive& archive) override {
    torch::optim::serialize<FtrlParamState, FtrlOptions>(archive, *this);
    step_counts_.forget();
  }

 private:
  // x^(-lr_power), through sqrt in TF's special case.
  static std::vector<at::Tensor> power(const std::vector<at::Tensor>& x, double lr_power) {
    return lr_power == -0.5 ? at::_foreach_sqrt(x) : at::_foreach_pow(x, -lr_power);
  }
};

}  // namespace orchestrate::optimizers

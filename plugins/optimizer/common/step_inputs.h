// What every optimizer's step() gathers before it updates anything: the
// closure's loss, the parameters of a group that have a gradient, and their
// per-parameter state, created on first use the way torch::optim does (so
// save()/load() see torch's own ParamState types).
#pragma once

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <torch/optim/optimizer.h>

#include <memory>
#include <utility>
#include <vector>

namespace orchestrate::optimizers {

using ParamStates = ska::flat_hash_map<void*, std::unique_ptr<torch::optim::OptimizerParamState>>;

// The parameters of one group that have a gradient this step, and those
// gradients; parameters without one are left alone, as torch.optim does.
// They are handed to fused and foreach kernels as one list, which expects
// one device and dtype: the host moves the whole model to one device, so
// unlike torch.optim this does not split a group by device and dtype.
struct StepInputs {
  std::vector<at::Tensor> params;
  std::vector<at::Tensor> grads;
  bool empty() const { return params.empty(); }
};

inline StepInputs params_with_grads(const torch::optim::OptimizerParamGroup& group) {
  StepInputs inputs;
  for (const auto& param : group.params()) {
    const auto& grad = param.grad();
    if (!grad.defined()) continue;
    // The fused and foreach kernels take dense tensors only.
    TORCH_CHECK(!grad.is_sparse(), "orchestrate optimizers do not support sparse gradients");
    inputs.params.push_back(param);
    inputs.grads.push_back(grad);
  }
  return inputs;
}

// The loss `closure` computes (with gradients on, as torch::optim does), or
// an undefined tensor when there is no closure.
inline at::Tensor evaluate_closure(const torch::optim::Optimizer::LossClosure& closure) {
  if (!closure) return {};
  at::AutoGradMode enable_grad(true);
  return closure();
}

// The state of `param`, made by `initialise` the first time it is asked for.
template <class State, class Initialise>
State& lazy_state(ParamStates& states, const at::Tensor& param, Initialise&& initialise) {
  auto& slot = states[param.unsafeGetTensorImpl()];
  if (!slot) {
    auto state = std::make_unique<State>();
    initialise(*state);
    slot = std::move(state);
  }
  return static_cast<State&>(*slot);
}

// A zero tensor shaped and laid out like `param`: the usual initial state.
inline at::Tensor zeros_like_param(const at::Tensor& param) {
  return at::zeros_like(param, at::MemoryFormat::Preserve);
}

}  // namespace orchestrate::optimizers

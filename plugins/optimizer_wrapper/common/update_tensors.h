// What the optimizer wrappers read at an update: the parameters of a group
// that have a gradient, their per-tensor L2 norms, and the group's current lr.
//
// Header-only (no CMakeLists.txt here) so every wrapper plugin compiles it in
// and stays a self-contained library. Everything here stays on the device:
// the host reads metrics only every log_every updates, and one .item() per
// update would stall the GPU queue.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <cstddef>
#include <string>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/optimizer.h"

namespace orchestrate::wrapper_support {

// The parameters of `group` that received a gradient this update. The base
// optimizer skips the others (frozen or unused layers), so a wrapper must too,
// or it would decay weights that are meant to stay put.
inline std::vector<at::Tensor> parameters_with_gradients(const ParameterGroup& group) {
  std::vector<at::Tensor> out;
  for (const auto& parameter : group.parameters)
    if (parameter.tensor.grad().defined()) out.push_back(parameter.tensor);
  return out;
}

// The gradients of `parameters` (each must have one); writing to them
// rewrites what the base optimizer will see.
inline std::vector<at::Tensor> gradients_of(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> out;
  out.reserve(parameters.size());
  for (const auto& parameter : parameters) out.push_back(parameter.grad());
  return out;
}

// The L2 norm of each tensor, as one 1-D tensor on the device of the first:
// one multi-tensor kernel instead of one norm (and one sync) per tensor.
inline at::Tensor l2_norms(at::TensorList tensors) {
  auto norms = at::_foreach_norm(tensors);
  const auto device = tensors.front().device();
  for (auto& norm : norms) norm = norm.to(device);  // a no-op unless a model spans devices
  return at::stack(norms);
}

// The lr the host set on torch param group `index` for this update (a host
// number, so reading it costs no sync).
inline double learning_rate_of(torch::optim::Optimizer& optimizer, std::size_t index) {
  return optimizer.param_groups().at(index).options().get_lr();
}

// Group i of the wrapper's context must be torch param group i of the base
// optimizer; a mismatch is a host bug that would silently scale the wrong tensors.
inline void check_same_groups(const torch::optim::Optimizer& optimizer, std::size_t context_groups,
                              const std::string& wrapper) {
  const auto optimizer_groups = optimizer.param_groups().size();
  if (optimizer_groups != context_groups)
    throw Error("[optimizer.wrappers] " + wrapper + ": the base optimizer has " + std::to_string(optimizer_groups) +
                " param groups but the wrapper was built for " + std::to_string(context_groups) +
                "; build both from the same WrapperContext groups");
}

}  // namespace orchestrate::wrapper_support

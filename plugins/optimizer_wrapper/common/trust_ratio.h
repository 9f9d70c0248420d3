// The layer-wise trust ratio shared by LARS and LAMB: how far a tensor may
// move relative to its own size.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

namespace orchestrate::wrapper_support {

// `ratio` where both norms are positive, else 1, elementwise over tensors.
// This is the MLPerf LARS reference's guard: a zero-initialised tensor (or
// one whose update vanished) takes the plain step instead of freezing or
// dividing by zero. `ratio` may hold inf or NaN where the guard applies.
inline at::Tensor ratio_where_norms_positive(const at::Tensor& weight_norms, const at::Tensor& update_norms,
                                             const at::Tensor& ratio) {
  return at::where(weight_norms.gt(0).logical_and(update_norms.gt(0)), ratio, at::ones_like(ratio));
}

// Logs the mean ratio over every adapted tensor of this update, on the device.
// No adapted tensor: nothing is logged, rather than a made-up 1.
inline void log_mean_ratio(std::map<std::string, at::Tensor>& metrics, const std::string& name,
                           const std::vector<at::Tensor>& ratios_per_group) {
  if (ratios_per_group.empty()) return;
  metrics[name] = at::cat(ratios_per_group).mean();
}

}  // namespace orchestrate::wrapper_support

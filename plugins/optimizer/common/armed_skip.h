// The found_inf flag a host hands an optimizer for its next step
// (orchestrate::SkipsOnDevice), kept for that step() only, so a later
// step() the host calls without one is never skipped by a stale flag.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <utility>

namespace orchestrate::optimizers {

class ArmedSkip {
 public:
  void arm(const at::Tensor& found_inf) { found_inf_ = found_inf; }

  // The flag for this step's kernels (their found_inf argument), or none; disarms.
  std::optional<at::Tensor> take() {
    if (!found_inf_.defined()) return std::nullopt;
    return std::exchange(found_inf_, at::Tensor());
  }

 private:
  at::Tensor found_inf_;
};

}  // namespace orchestrate::optimizers

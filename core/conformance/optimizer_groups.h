// The parameter groups the conformance checks hand optimizers, wrappers and
// compressors: two groups as the host forms them.
#pragma once

#include <ATen/ATen.h>

#include "orchestrate/optimizer.h"

// Two groups as the host forms them: weights with decay and an lr multiplier,
// and a bias without decay.
inline orchestrate::OptimizerContext two_groups(const at::Tensor& weights, const at::Tensor& bias) {
  orchestrate::OptimizerContext context;
  context.groups.push_back({"decay", {{"fc.weight", weights}}, 2.0, 0.01, false});
  context.groups.push_back({"no_decay", {{"fc.bias", bias}}, 1.0, 0.0, true});
  return context;
}

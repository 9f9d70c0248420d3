// Counts a model's forward FLOPs with LibTorch's own profiler (with_flops),
// which knows the formulas of the ops that dominate: convolutions and matrix
// products. Ops it has no formula for count as zero, so the figure is a lower
// bound, exact for conv/linear networks.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "orchestrate/model.h"

namespace orchestrate_hooks {

struct FlopCount {
  std::uint64_t total = 0;
  std::map<std::string, std::uint64_t> by_op;  // "aten::conv2d" -> FLOPs
};

// One forward pass of one zero image of `input`'s shape, in eval mode and
// without gradients; the model's mode is restored and nothing in it changes.
FlopCount forward_flops_per_image(orchestrate::Model& model, const orchestrate::ModelInput& input,
                                  const c10::Device& device);

}  // namespace orchestrate_hooks

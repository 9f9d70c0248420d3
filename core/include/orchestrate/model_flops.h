// Counts a model's forward FLOPs with LibTorch's own profiler (with_flops),
// which knows the formulas of the ops that dominate: convolutions and matrix
// products. Ops it has no formula for count as zero, so the figure is a lower
// bound, exact for conv/linear networks.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "orchestrate/api.h"
#include "orchestrate/model.h"

namespace orchestrate {

struct FlopCount {
  std::uint64_t total = 0;
  std::map<std::string, std::uint64_t> by_op;  // "aten::conv2d" -> FLOPs
};

// One forward pass of one zero image of `input`'s shape, in eval mode,
// without gradients and without cuDNN's autotuning (a shape training never
// runs); the model's mode and the autotuning setting are restored, and
// nothing in the model changes.
ORCHESTRATE_API FlopCount forward_flops_per_image(Model& model, const ModelInput& input, const c10::Device& device);

// FLOPs of one training example: the forward pass, then the backward's
// gradients of the weights and of each layer's input, each as costly as the
// forward for convolutions and matrix products. 3x the forward, the count
// torchtitan's and PaLM's MFU use; it includes the first layer's input
// gradient, which training never computes (for the MNIST ConvNet, 2.8 % more
// than the exact count).
inline double training_flops_per_image(const FlopCount& forward) { return 3.0 * static_cast<double>(forward.total); }

}  // namespace orchestrate

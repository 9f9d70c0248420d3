// The model interface: a torch::nn::Module mapping images to logits.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>

#include "orchestrate/api.h"

namespace orchestrate {

// What the data looks like, so a model can size its first and last layers.
struct ModelInput {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t num_classes = 0;
};

class ORCHESTRATE_API Model : public torch::nn::Module {
 public:
  ~Model() override;
  // images: float [N, C, H, W]; returns logits [N, num_classes] (no softmax).
  virtual at::Tensor forward(const at::Tensor& images) = 0;
};

}  // namespace orchestrate

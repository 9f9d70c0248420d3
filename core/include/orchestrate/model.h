// The model interface: a torch::nn::Module mapping images to logits.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <map>
#include <string>

#include "orchestrate/api.h"

namespace orchestrate {

// What the data looks like, so a model can size its first and last layers.
struct ModelInput {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t num_classes = 0;
};

// A training forward pass: the logits, and the auxiliary classifiers' logits
// by name (Inception's "aux"), which the trainer adds to the loss with their
// weight ([loss] aux_weight, by default the model's ModelMeta::aux_logits).
struct ModelOutput {
  at::Tensor logits;                           // [N, num_classes]
  std::map<std::string, at::Tensor> aux_logits;  // each [N, num_classes]; empty for most models
};

class ORCHESTRATE_API Model : public torch::nn::Module {
 public:
  ~Model() override;
  // images: float [N, C, H, W]; returns logits [N, num_classes] (no softmax).
  // Used for evaluation, prediction and export.
  virtual at::Tensor forward(const at::Tensor& images) = 0;
  // Used for training (the module is in train mode): the logits plus any
  // auxiliary logits. The default is forward() with no auxiliary logits.
  virtual ModelOutput forward_train(const at::Tensor& images);
};

}  // namespace orchestrate

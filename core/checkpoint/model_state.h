// A model's weights as a checkpoint holds them: parameters then buffers, by
// their module names (the model's state dict, saved as safetensors).
#pragma once

#include <string>

#include <torch/nn/module.h>

#include "checkpoint/safetensors.h"

namespace orchestrate {

NamedTensors model_state(const torch::nn::Module& model);

// Copies `weights` into the model, which must hold exactly those names and
// shapes (a resume). Errors name the checkpoint and the first mismatch.
void load_model_state(torch::nn::Module& model, const NamedTensors& weights, const std::string& source);

}  // namespace orchestrate

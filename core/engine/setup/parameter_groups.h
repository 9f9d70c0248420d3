// Forms the optimizer's parameter groups from the model's named parameters
// and the [optimizer] settings: no weight decay for biases and normalization
// parameters (MLPerf, timm), [[optimizer.groups]] lr and decay scales.
#pragma once

#include <torch/nn/module.h>

#include <vector>

#include "engine/recipe/settings.h"
#include "orchestrate/optimizer.h"

namespace orchestrate {

// Groups in order of first appearance; parameters that need no gradient are
// left out; no group is empty. Throws Error when no parameter is trainable.
std::vector<ParameterGroup> form_parameter_groups(const torch::nn::Module& model, const OptimizerSettings& settings);

}  // namespace orchestrate

// The preprocessing presets published weights are trained with, declared once
// so every model of a family states the same numbers.
#pragma once

#include "orchestrate/registry.h"

namespace orchestrate {

// torchvision's ImageNet models (ResNet, VGG): resize 256, crop 224.
inline PreprocessingPreset imagenet_preprocessing() {
  return {"imagenet", {0.485, 0.456, 0.406}, {0.229, 0.224, 0.225}, 256};
}

// Inception v3 and Inception-ResNet-v2 (torchvision, timm, TF-slim): pixels
// scaled to [-1, 1]; resize 342, crop 299.
inline PreprocessingPreset inception_preprocessing() { return {"inception", {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, 342}; }

// Pixels in [0, 1] as the data set gives them (the small Fashion-MNIST models).
inline PreprocessingPreset no_preprocessing() { return {"none", {}, {}, 0}; }

}  // namespace orchestrate

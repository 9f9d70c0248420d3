// torchvision's ColorJitter for brightness, contrast and saturation on uint8
// pixels [H, W, C]: each factor drawn uniformly from [max(0, 1 - x), 1 + x],
// the three applied in a random order, each one a blend with black, the mean
// grey or the grey image (adjust_brightness, adjust_contrast,
// adjust_saturation of transforms.v2.functional), truncated back to uint8
// after each as torchvision does. Hue is not offered.
#pragma once

#include <ATen/core/Tensor.h>

#include "sample_random.h"

namespace orchestrate::preprocessing {

struct JitterStrength {
  double brightness = 0;
  double contrast = 0;
  double saturation = 0;
  bool any() const { return brightness > 0 || contrast > 0 || saturation > 0; }
};

at::Tensor colour_jitter(const at::Tensor& pixels, const JitterStrength& strength, SampleRandom& random);

}  // namespace orchestrate::preprocessing

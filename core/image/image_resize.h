// Decoded pixels to a float image of a given size: the one resize that
// training data and exported preprocessing share, so a model sees at serving
// time exactly the resampling it was trained on.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace orchestrate {

// uint8 pixels [H, W, C] to float32 [C, height, width] in pixel units (0-255),
// resized, only when the size differs, with torchvision's
// Resize(antialias=True) on a float tensor (the same ATen kernel).
at::Tensor resize_to_chw_float(const at::Tensor& pixels, std::int64_t height, std::int64_t width);

}  // namespace orchestrate

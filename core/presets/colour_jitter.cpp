#include "colour_jitter.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <array>

namespace orchestrate::preprocessing {

namespace {

// ITU-R 601-2 luma in float, floored for uint8 images (torchvision's _rgb_to_grayscale_image).
at::Tensor grey_of(const at::Tensor& image) {
  const auto grey = image.select(2, 0) * 0.2989 + image.select(2, 1) * 0.587 + image.select(2, 2) * 0.114;
  return grey.floor_().unsqueeze(2);
}

// ratio * image + (1 - ratio) * other, clamped and truncated to uint8 (torchvision's _blend).
at::Tensor blend(const at::Tensor& image, const at::Tensor& other, double ratio) {
  return image.mul(ratio).add_(other, 1.0 - ratio).clamp_(0, 255).to(at::kByte);
}

}  // namespace

at::Tensor colour_jitter(const at::Tensor& pixels, const JitterStrength& strength, SampleRandom& random) {
  std::array<int, 3> order{0, 1, 2};
  for (int i = 2; i > 0; --i) std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(random.below(i + 1))]);
  const std::array<double, 3> amounts{strength.brightness, strength.contrast, strength.saturation};
  at::Tensor image = pixels;
  for (const int op : order) {
    const double amount = amounts[static_cast<std::size_t>(op)];
    if (amount <= 0) continue;
    const double factor = random.uniform(std::max(0.0, 1.0 - amount), 1.0 + amount);
    const auto values = image.to(at::kFloat);
    const bool rgb = values.size(2) == 3;
    if (op == 0) {
      image = blend(values, at::zeros_like(values), factor);
    } else if (op == 1) {
      const auto mean = (rgb ? grey_of(values) : values).mean();
      image = blend(values, mean, factor);
    } else if (rgb) {
      image = blend(values, grey_of(values), factor);
    }
  }
  return image.contiguous();
}

}  // namespace orchestrate::preprocessing

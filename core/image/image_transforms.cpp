#include "image_transforms.h"

#include <ATen/ops/_upsample_bilinear2d_aa.h>

#include <cmath>
#include <string>

#include "orchestrate/error.h"

namespace orchestrate {

at::Tensor resize_pixels(const at::Tensor& pixels, std::int64_t height, std::int64_t width) {
  if (pixels.size(0) == height && pixels.size(1) == width) return pixels;
  // [1, C, H, W] over the [H, W, C] memory: channels_last, the layout the
  // uint8 kernel works in, so no copy on the way in or out.
  const auto image = pixels.permute({2, 0, 1}).unsqueeze(0);
  const auto resized = at::_upsample_bilinear2d_aa(image, {height, width}, /*align_corners=*/false);
  return resized.squeeze(0).permute({1, 2, 0}).contiguous();
}

at::Tensor resize_shorter_side(const at::Tensor& pixels, std::int64_t size) {
  const std::int64_t height = pixels.size(0), width = pixels.size(1);
  const bool tall = height > width;
  const std::int64_t shorter = tall ? width : height, longer = tall ? height : width;
  const auto new_longer = static_cast<std::int64_t>(static_cast<double>(size) * static_cast<double>(longer) /
                                                    static_cast<double>(shorter));
  return tall ? resize_pixels(pixels, new_longer, size) : resize_pixels(pixels, size, new_longer);
}

at::Tensor crop_pixels(const at::Tensor& pixels, std::int64_t top, std::int64_t left, std::int64_t height,
                       std::int64_t width) {
  if (top < 0 || left < 0 || height < 1 || width < 1 || top + height > pixels.size(0) || left + width > pixels.size(1))
    throw Error("crop of " + std::to_string(height) + "x" + std::to_string(width) + " at (" + std::to_string(top) +
                ", " + std::to_string(left) + ") does not fit in a " + std::to_string(pixels.size(0)) + "x" +
                std::to_string(pixels.size(1)) + " image");
  return pixels.narrow(0, top, height).narrow(1, left, width);
}

at::Tensor center_crop(const at::Tensor& pixels, std::int64_t height, std::int64_t width) {
  // std::nearbyint rounds ties to even under the default rounding mode, as Python's round() does.
  const auto top = static_cast<std::int64_t>(std::nearbyint(static_cast<double>(pixels.size(0) - height) / 2.0));
  const auto left = static_cast<std::int64_t>(std::nearbyint(static_cast<double>(pixels.size(1) - width) / 2.0));
  return crop_pixels(pixels, top, left, height, width);
}

at::Tensor central_fraction_crop(const at::Tensor& pixels, double fraction) {
  if (fraction >= 1.0) return pixels;
  const std::int64_t height = pixels.size(0), width = pixels.size(1);
  const auto top = static_cast<std::int64_t>((static_cast<double>(height) - static_cast<double>(height) * fraction) / 2);
  const auto left = static_cast<std::int64_t>((static_cast<double>(width) - static_cast<double>(width) * fraction) / 2);
  return crop_pixels(pixels, top, left, height - 2 * top, width - 2 * left);
}

at::Tensor flip_horizontally(const at::Tensor& pixels) { return pixels.flip({1}); }

}  // namespace orchestrate

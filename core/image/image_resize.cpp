#include "image_resize.h"

#include <ATen/ops/_upsample_bilinear2d_aa.h>

namespace orchestrate {

at::Tensor resize_to_chw_float(const at::Tensor& pixels, std::int64_t height, std::int64_t width) {
  auto image = pixels.permute({2, 0, 1}).to(at::kFloat);
  if (image.size(1) == height && image.size(2) == width) return image.contiguous();
  return at::_upsample_bilinear2d_aa(image.unsqueeze(0), {height, width}, /*align_corners=*/false).squeeze(0);
}

}  // namespace orchestrate

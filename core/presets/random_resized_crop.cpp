#include "random_resized_crop.h"

#include <cmath>

namespace orchestrate::preprocessing {

namespace {

// Python's round(): ties to even, as std::nearbyint does in the default rounding mode.
std::int64_t round_half_even(double x) { return static_cast<std::int64_t>(std::nearbyint(x)); }

}  // namespace

CropBox random_resized_crop_box(std::int64_t height, std::int64_t width, const CropRanges& ranges,
                                SampleRandom& random) {
  const double area = static_cast<double>(height) * static_cast<double>(width);
  const double log_min_ratio = std::log(ranges.min_ratio), log_max_ratio = std::log(ranges.max_ratio);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * random.uniform(ranges.min_scale, ranges.max_scale);
    const double aspect = std::exp(random.uniform(log_min_ratio, log_max_ratio));
    const std::int64_t w = round_half_even(std::sqrt(target_area * aspect));
    const std::int64_t h = round_half_even(std::sqrt(target_area / aspect));
    if (w > 0 && w <= width && h > 0 && h <= height)
      return {random.below(height - h + 1), random.below(width - w + 1), h, w};
  }
  // No box fitted: the whole image, cut to the nearest allowed aspect ratio.
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);
  std::int64_t w = width, h = height;
  if (in_ratio < ranges.min_ratio) {
    h = round_half_even(static_cast<double>(w) / ranges.min_ratio);
  } else if (in_ratio > ranges.max_ratio) {
    w = round_half_even(static_cast<double>(h) * ranges.max_ratio);
  }
  return {(height - h) / 2, (width - w) / 2, h, w};
}

}  // namespace orchestrate::preprocessing

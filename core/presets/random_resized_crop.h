// Where torchvision's RandomResizedCrop cuts: a box of a random fraction of
// the image's area (scale) and a random aspect ratio (ratio, width / height,
// drawn log-uniformly), tried ten times, else the central box of the nearest
// allowed ratio. The same algorithm as RandomResizedCrop.get_params; the
// random numbers are the sample's own (sample_random.h).
#pragma once

#include <cstdint>

#include "sample_random.h"

namespace orchestrate::preprocessing {

struct CropBox {
  std::int64_t top = 0;
  std::int64_t left = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
};

struct CropRanges {
  double min_scale = 0.08;
  double max_scale = 1.0;
  double min_ratio = 3.0 / 4.0;
  double max_ratio = 4.0 / 3.0;
};

CropBox random_resized_crop_box(std::int64_t height, std::int64_t width, const CropRanges& ranges, SampleRandom& random);

}  // namespace orchestrate::preprocessing

// JPEG and PNG files to pixels, with libjpeg-turbo and libpng.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "image_header.h"
#include "image_limits.h"

namespace orchestrate {

// Decodes a JPEG or PNG image into uint8 [height, width, channels], converted
// to `channels` (1: grey, 3: RGB); alpha is dropped, 16-bit PNG is reduced to
// 8 bits. A corrupt or unsupported file is an Error naming `source` and why.
//
// min_side > 0 allows a JPEG to be decoded at a reduced scale: libjpeg-turbo's
// DCT-domain scaling (1/2, 1/4, 1/8 ... of each side, inside the inverse DCT,
// so much less work than a full decode) with the smallest factor that keeps
// both sides at least min_side. For images much larger than they will be
// resized to anyway. PNG is always decoded at full size.
//
// An image whose header declares more than max_pixels pixels (width x
// height) is refused as corrupt before anything is allocated.
at::Tensor decode_image(std::string_view bytes, std::int64_t channels, const std::string& source,
                        std::int64_t min_side = 0, std::int64_t max_pixels = kDefaultMaxImagePixels);

// Reads and decodes the file at `path`.
at::Tensor read_image(const std::string& path, std::int64_t channels,
                      std::int64_t max_pixels = kDefaultMaxImagePixels);

}  // namespace orchestrate

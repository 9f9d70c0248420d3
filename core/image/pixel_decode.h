// JPEG and PNG pixels decoded into memory the caller provides, with
// libjpeg-turbo and libpng, after the header checks of image_header.h. Free
// of LibTorch: image_decode.h wraps it in tensors, the fuzz targets in vectors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "image_limits.h"

namespace orchestrate {

// The decoded image: uint8, row-major [height, width, channels]. PNG is
// decoded with alpha (channels 2 or 4, the last one alpha), so the caller
// drops it as Pillow's convert() does rather than compositing it.
struct PixelLayout {
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t channels = 0;
  bool alpha = false;
};

// Given the layout, returns where to write height * width * channels bytes.
using PixelBuffer = std::function<std::uint8_t*(const PixelLayout&)>;

struct DecodeLimits {
  // > 0: a JPEG may be decoded at a reduced scale (see decode_image).
  std::int64_t min_side = 0;
  // Declared width x height above this is refused before any allocation.
  std::int64_t max_pixels = kDefaultMaxImagePixels;
};

// Decodes a JPEG or PNG; a corrupt, unsupported or too large image throws
// orchestrate::Error naming `source` and why.
PixelLayout decode_pixels(std::string_view bytes, const std::string& source, const DecodeLimits& limits,
                          const PixelBuffer& buffer);

}  // namespace orchestrate

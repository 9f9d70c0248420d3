// JPEG and PNG pixels decoded into memory the caller provides, with
// libjpeg-turbo and libpng, after the header checks of image_header.h. Free
// of LibTorch: image_decode.h wraps it in tensors, the fuzz targets in vectors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "image_limits.h"
#include "orchestrate/decode_window.h"

namespace orchestrate {

// The decoded image (or window): uint8, row-major [height, width, channels]. PNG is
// decoded with alpha (channels 2 or 4, the last one alpha), so the caller
// drops it as Pillow's convert() does rather than compositing it.
struct PixelLayout {
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t channels = 0;
  bool alpha = false;
  // A colour JPEG decoded four bytes a pixel (RGBX, channels 4): the fourth
  // byte is padding, not alpha. Asked for with four_byte_rgb.
  bool padding = false;
};

// Given the layout, returns where to write height * width * channels bytes.
using PixelBuffer = std::function<std::uint8_t*(const PixelLayout&)>;

// Decodes `choose(height, width)`'s window of a JPEG or PNG (an empty
// `choose`: all of it, at full scale). A JPEG decodes only the window, at a
// reduced scale where its min_side allows (jpeg_window.h); a PNG is decoded
// whole and the window copied out. An image declaring more than max_pixels
// pixels is refused before any allocation; a corrupt, unsupported or too
// large image throws orchestrate::Error naming `source` and why.
// four_byte_rgb: a colour JPEG comes as RGBX (PixelLayout::padding), the
// layout ATen's uint8 resize works in without repacking.
PixelLayout decode_pixels(std::string_view bytes, const std::string& source, std::int64_t max_pixels,
                          const ChooseWindow& choose, const PixelBuffer& buffer, bool four_byte_rgb = false);

}  // namespace orchestrate

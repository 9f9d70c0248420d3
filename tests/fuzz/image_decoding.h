// What the png and jpeg targets share: decode the input as the datasets do,
// into a plain vector, with a pixel limit small enough that every execution
// stays fast (the limit's own check is the same at any value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/image/image_header.h"
#include "orchestrate/image/pixel_decode.h"

namespace orchestrate::fuzz {

inline constexpr std::int64_t kFuzzMaxPixels = std::int64_t{1} << 22;

// Decodes an input of the `format` the target is about (others are left to
// the other target) at full size and, where the image is large enough to be
// reduced, at the reduced JPEG scale the datasets ask for with min_side.
inline void decode_both_ways(const std::uint8_t* data, std::size_t size, ImageFormat format) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (sniff_image_format(bytes) != format) return;
  for (const std::int64_t min_side : {std::int64_t{0}, std::int64_t{16}}) {
    std::vector<std::uint8_t> pixels;
    try {
      const PixelLayout layout =
          decode_pixels(bytes, "input", {min_side, kFuzzMaxPixels}, [&](const PixelLayout& l) {
            pixels.resize(static_cast<std::size_t>(l.height * l.width * l.channels));
            return pixels.data();
          });
      // The decoder wrote exactly the layout it announced.
      if (static_cast<std::int64_t>(pixels.size()) != layout.height * layout.width * layout.channels) __builtin_trap();
      if (layout.width < 2 * min_side || layout.height < 2 * min_side) return;  // nothing to reduce
    } catch (const orchestrate::Error&) {
      return;
    }
  }
}

}  // namespace orchestrate::fuzz

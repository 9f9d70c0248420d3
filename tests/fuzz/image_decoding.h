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
// the other target) as the datasets do: whole at full size, then a window
// (a crop's box, somewhere inside) at the reduced JPEG scale a preprocessing
// asks for with min_side, so the crop and skip paths see every input too.
inline void decode_both_ways(const std::uint8_t* data, std::size_t size, ImageFormat format) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (sniff_image_format(bytes) != format) return;
  const ChooseWindow inner = [](std::int64_t height, std::int64_t width) {
    return DecodeWindow{height / 4, width / 3, height - height / 4 - height / 5, width - width / 3, 16};
  };
  for (const ChooseWindow& choose : {ChooseWindow{}, inner}) {
    std::vector<std::uint8_t> pixels;
    try {
      const PixelLayout layout = decode_pixels(bytes, "input", kFuzzMaxPixels, choose, [&](const PixelLayout& l) {
        pixels.resize(static_cast<std::size_t>(l.height * l.width * l.channels));
        return pixels.data();
      });
      // The decoder wrote exactly the layout it announced.
      if (static_cast<std::int64_t>(pixels.size()) != layout.height * layout.width * layout.channels) __builtin_trap();
    } catch (const orchestrate::Error&) {
      return;
    }
  }
}

}  // namespace orchestrate::fuzz

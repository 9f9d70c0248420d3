// The largest image orchestrate decodes, in pixels (width x height). The
// default is Pillow's MAX_IMAGE_PIXELS, so a file torchvision would open is
// opened here too; a larger one is a decompression bomb until the user says
// otherwise (the image datasets' max_image_pixels key).
#pragma once

#include <cstdint>

namespace orchestrate {

inline constexpr std::int64_t kDefaultMaxImagePixels = 89'478'485;

}  // namespace orchestrate

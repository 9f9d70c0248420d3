// The largest image orchestrate decodes, in pixels (width x height). The
// default is Pillow's MAX_IMAGE_PIXELS, so a file torchvision would open is
// opened here too; a larger one is a decompression bomb until the user says
// otherwise (the image datasets' max_image_pixels key).
#pragma once

#include <cstdint>

namespace orchestrate {

inline constexpr std::int64_t kDefaultMaxImagePixels = 89'478'485;

// Scans in one progressive JPEG. Each scan is a pass over the whole image, so
// a small file with tens of thousands of tiny scans takes minutes to decode;
// ordinary encoders write at most a few dozen. libjpeg-turbo's own tools
// (djpeg -maxscans, TurboJPEG's TJFLAG_LIMITSCANS) stop at the same count.
inline constexpr int kMaxJpegScans = 500;

}  // namespace orchestrate

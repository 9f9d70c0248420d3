#include "pixel_decode.h"

#include <png.h>
#include <turbojpeg.h>

#include <memory>
#include <utility>

#include "image_header.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// The scaled size libjpeg-turbo offers that is smallest while both sides stay
// at least `min_side` (the full size when none is smaller).
std::pair<int, int> reduced_jpeg_size(int width, int height, std::int64_t min_side) {
  std::pair<int, int> best{width, height};
  if (min_side <= 0) return best;
  int count = 0;
  const tjscalingfactor* factors = tjGetScalingFactors(&count);
  for (int i = 0; factors && i < count; ++i) {
    const tjscalingfactor f = factors[i];
    if (f.num > f.denom) continue;  // enlarging: never
    const int w = TJSCALED(width, f), h = TJSCALED(height, f);
    if (w >= min_side && h >= min_side && static_cast<std::int64_t>(w) * h < static_cast<std::int64_t>(best.first) * best.second)
      best = {w, h};
  }
  return best;
}

PixelLayout decode_jpeg(std::string_view bytes, const ImageHeader& header, const std::string& source,
                        std::int64_t min_side, const PixelBuffer& buffer) {
  const std::unique_ptr<void, int (*)(tjhandle)> handle(tjInitDecompress(), tjDestroy);
  if (!handle) throw Error("cannot start the JPEG decoder: " + std::string(tjGetErrorStr()));
  auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto size = static_cast<unsigned long>(bytes.size());
  // tjDecompress2 picks the DCT scaling factor that fits width x height.
  const auto [width, height] =
      reduced_jpeg_size(static_cast<int>(header.width), static_cast<int>(header.height), min_side);
  const PixelLayout layout{height, width, header.grey ? 1 : 3, false};
  if (tjDecompress2(handle.get(), data, size, buffer(layout), width, 0, height, header.grey ? TJPF_GRAY : TJPF_RGB,
                    TJFLAG_ACCURATEDCT) != 0) {
    // libjpeg reports a truncated file only as a warning and fills the rest
    // grey; a training sample or a prediction must not be made of that.
    // Other warnings (stray bytes between markers) are common and harmless.
    const std::string why = tjGetErrorStr2(handle.get());
    if (tjGetErrorCode(handle.get()) == TJERR_FATAL || why.find("Premature end") != std::string::npos)
      throw Error(source + ": corrupt JPEG (" + why + ")");
  }
  return layout;
}

// The header is read once, here, rather than by read_image_header and then
// again for the rows: the checks run between the two halves of libpng's read.
PixelLayout decode_png(std::string_view bytes, const std::string& source, std::int64_t max_pixels,
                       const PixelBuffer& buffer) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()))
    throw Error(source + ": not a readable PNG (" + image.message + ")");
  // Read with alpha, then drop it: what Pillow's convert() does, where
  // asking libpng for no alpha would composite onto a background instead.
  const bool color = (image.format & PNG_FORMAT_FLAG_COLOR) != 0;
  image.format = color ? PNG_FORMAT_RGBA : PNG_FORMAT_GA;
  const PixelLayout layout{image.height, image.width, color ? 4 : 2, true};
  std::uint8_t* pixels = nullptr;
  try {
    check_image_size(layout.width, layout.height, source, max_pixels);
    check_png_data_size({ImageFormat::png, layout.width, layout.height, !color}, bytes.size(), source);
    pixels = buffer(layout);
  } catch (...) {
    png_image_free(&image);
    throw;
  }
  if (!png_image_finish_read(&image, nullptr, pixels, 0, nullptr)) {
    const std::string why = image.message;
    png_image_free(&image);
    throw Error(source + ": corrupt PNG (" + why + ")");
  }
  return layout;
}

}  // namespace

PixelLayout decode_pixels(std::string_view bytes, const std::string& source, const DecodeLimits& limits,
                          const PixelBuffer& buffer) {
  if (sniff_image_format(bytes) == ImageFormat::png) return decode_png(bytes, source, limits.max_pixels, buffer);
  // A JPEG's header (or the error for what is neither format).
  const ImageHeader header = read_image_header(bytes, source, limits.max_pixels);
  return decode_jpeg(bytes, header, source, limits.min_side, buffer);
}

}  // namespace orchestrate

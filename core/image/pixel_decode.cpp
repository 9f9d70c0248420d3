#include "pixel_decode.h"

#include <png.h>

#include <cstring>
#include <vector>

#include "image_header.h"
#include "jpeg_window.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace {

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

// A PNG is decoded whole (libpng has no way to skip columns, and rows are
// filtered against the ones above); the window is then copied out.
PixelLayout decode_png_window(std::string_view bytes, const std::string& source, std::int64_t max_pixels,
                              const ChooseWindow& choose, const PixelBuffer& buffer) {
  if (!choose) return decode_png(bytes, source, max_pixels, buffer);
  // Not kept between images: one large PNG would pin its size per thread.
  std::vector<std::uint8_t> whole;
  const PixelLayout full = decode_png(bytes, source, max_pixels, [&](const PixelLayout& l) {
    whole.resize(static_cast<std::size_t>(l.height * l.width * l.channels));
    return whole.data();
  });
  const DecodeWindow window = choose(full.height, full.width);
  check_window(window, full.height, full.width);
  const PixelLayout layout{window.height, window.width, full.channels, full.alpha};
  std::uint8_t* out = buffer(layout);
  const std::int64_t row_bytes = window.width * full.channels;
  for (std::int64_t row = 0; row < window.height; ++row)
    std::memcpy(out + row * row_bytes, whole.data() + ((window.top + row) * full.width + window.left) * full.channels,
                static_cast<std::size_t>(row_bytes));
  return layout;
}

}  // namespace

PixelLayout decode_pixels(std::string_view bytes, const std::string& source, std::int64_t max_pixels,
                          const ChooseWindow& choose, const PixelBuffer& buffer, bool four_byte_rgb) {
  switch (sniff_image_format(bytes)) {
    case ImageFormat::png: return decode_png_window(bytes, source, max_pixels, choose, buffer);
    case ImageFormat::jpeg: return decode_jpeg_window(bytes, source, max_pixels, choose, buffer, four_byte_rgb);
    case ImageFormat::unknown: break;
  }
  read_image_header(bytes, source, max_pixels);  // throws, naming what the bytes are not
  throw Error(source + ": neither a JPEG nor a PNG file");
}

}  // namespace orchestrate

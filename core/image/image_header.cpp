#include "image_header.h"

#include <png.h>


#include "jpeg_window.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// zlib's deflate expands at most 1032:1 (a 258-byte match coded in two
// bits), so a PNG whose declared rows need more than that many times its own
// size cannot hold them: the header lies, or the file was cut short.
constexpr std::int64_t kMaxDeflateRatio = 1032;

std::string sides(std::int64_t width, std::int64_t height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

ImageHeader read_png_header(std::string_view bytes, const std::string& source) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  // Reads the chunks before the image data (IHDR and the like), no rows.
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()))
    throw Error(source + ": not a readable PNG (" + image.message + ")");
  const ImageHeader header{ImageFormat::png, image.width, image.height, (image.format & PNG_FORMAT_FLAG_COLOR) == 0};
  png_image_free(&image);
  return header;
}

}  // namespace

// After the pixel limit (so a bomb is named as one): the fewest bytes the
// declared rows can take, one bit per pixel and a filter byte a row.
void check_png_data_size(const ImageHeader& header, std::size_t file_bytes, const std::string& source) {
  const std::int64_t row_bytes = 1 + (header.width + 7) / 8;
  if (header.height > static_cast<std::int64_t>(file_bytes) * kMaxDeflateRatio / row_bytes)
    throw Error(source + ": corrupt PNG (its header declares " + sides(header.width, header.height) +
                " pixels, more than its " + std::to_string(file_bytes) +
                " bytes can hold; the file is truncated or its header is damaged)");
}

ImageFormat sniff_image_format(std::string_view bytes) {
  if (bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xFF &&
      static_cast<unsigned char>(bytes[1]) == 0xD8 && static_cast<unsigned char>(bytes[2]) == 0xFF)
    return ImageFormat::jpeg;
  if (bytes.size() >= 8 && bytes.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8)) return ImageFormat::png;
  return ImageFormat::unknown;
}

void check_image_size(std::int64_t width, std::int64_t height, const std::string& source, std::int64_t max_pixels) {
  if (width <= 0 || height <= 0)
    throw Error(source + ": corrupt image (its header declares " + sides(width, height) +
                " pixels; a side of zero is no image)");
  // Sides come from 32-bit header fields, so the product fits in 64 bits.
  if (width * height > max_pixels)
    throw Error(source + ": image of " + sides(width, height) + " = " + std::to_string(width * height) +
                " pixels exceeds the limit of " + std::to_string(max_pixels) +
                " (a decompression bomb?); raise the dataset's max_image_pixels if it is genuine");
}

ImageHeader read_image_header(std::string_view bytes, const std::string& source, std::int64_t max_pixels) {
  ImageHeader header;
  switch (sniff_image_format(bytes)) {
    case ImageFormat::jpeg: header = read_jpeg_header(bytes, source); break;
    case ImageFormat::png: header = read_png_header(bytes, source); break;
    case ImageFormat::unknown:
      throw Error(source + ": neither a JPEG nor a PNG file (" +
                  (bytes.empty() ? std::string("it is empty") : "its first bytes are not an image signature") + ")");
  }
  check_image_size(header.width, header.height, source, max_pixels);
  if (header.format == ImageFormat::png) check_png_data_size(header, bytes.size(), source);
  return header;
}

}  // namespace orchestrate

// What a JPEG or PNG file declares about itself, read from its header alone:
// the checks that must come before any pixel buffer is allocated. Free of
// LibTorch, so the fuzz build links it directly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace orchestrate {

enum class ImageFormat { jpeg, png, unknown };

// By the file's leading bytes, not its name.
ImageFormat sniff_image_format(std::string_view bytes);

struct ImageHeader {
  ImageFormat format = ImageFormat::unknown;
  std::int64_t width = 0;
  std::int64_t height = 0;
  bool grey = false;  // one channel stored (JPEG: greyscale; PNG: no colour)
};

// Reads the header of a JPEG or PNG; an unreadable header, zero sides or more
// than `max_pixels` pixels throws orchestrate::Error naming `source`.
ImageHeader read_image_header(std::string_view bytes, const std::string& source, std::int64_t max_pixels);

// Throws when width x height is not in [1, max_pixels]: the one-line message
// names the image, its sides, the limit and the key that raises it.
void check_image_size(std::int64_t width, std::int64_t height, const std::string& source, std::int64_t max_pixels);

// Throws when a PNG of `file_bytes` bytes cannot hold the rows its header
// declares even at deflate's best ratio (a lying or truncated file).
void check_png_data_size(const ImageHeader& header, std::size_t file_bytes, const std::string& source);

}  // namespace orchestrate

// Small image files whose headers declare other sides than their pixels
// have: a real encoder's output with the size fields rewritten (and, for
// PNG, the header's CRC made right again, so only the size is wrong). A
// 100000 x 100000 "bomb" is a few hundred bytes. For tests.
#pragma once

#include <png.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <jpeglib.h>  // after <cstdio>: it needs FILE

namespace orchestrate::testing {

// An 8 x 8 RGB gradient.
inline std::vector<unsigned char> small_rgb() {
  std::vector<unsigned char> pixels(8 * 8 * 3);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<unsigned char>(i * 5);
  return pixels;
}

inline void put_big_endian(std::string& bytes, std::size_t at, std::uint32_t value, int width) {
  for (int i = 0; i < width; ++i) bytes[at + i] = static_cast<char>(value >> (8 * (width - 1 - i)));
}

// A PNG of 8 x 8 pixels whose IHDR declares width x height.
inline std::string png_declaring(std::uint32_t width, std::uint32_t height) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = 8;
  image.height = 8;
  image.format = PNG_FORMAT_RGB;
  const auto pixels = small_rgb();
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, pixels.data(), 0, nullptr))
    throw std::runtime_error("libpng cannot size the test PNG");
  std::string bytes(size, '\0');
  if (!png_image_write_to_memory(&image, bytes.data(), &size, 0, pixels.data(), 0, nullptr))
    throw std::runtime_error("libpng cannot write the test PNG");
  bytes.resize(size);
  // Signature (8), IHDR length (4) and type (4), then width and height; the
  // CRC after the 13 data bytes covers the type and data.
  put_big_endian(bytes, 16, width, 4);
  put_big_endian(bytes, 20, height, 4);
  const auto crc = crc32(0, reinterpret_cast<const Bytef*>(bytes.data() + 12), 17);
  put_big_endian(bytes, 29, static_cast<std::uint32_t>(crc), 4);
  return bytes;
}

// An 8 x 8 RGB image (small_rgb) as libjpeg writes it: baseline at quality
// 90, or progressive in the given scans (a scan script, jpeglib.h's
// jpeg_scan_info) when there are any.
inline std::string small_jpeg(const std::vector<jpeg_scan_info>& scans = {}) {
  jpeg_compress_struct info{};
  jpeg_error_mgr errors{};
  info.err = jpeg_std_error(&errors);  // a failure here exits: a broken libjpeg, not a test result
  jpeg_create_compress(&info);
  unsigned char* encoded = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&info, &encoded, &size);
  info.image_width = 8;
  info.image_height = 8;
  info.input_components = 3;
  info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, 90, TRUE);
  if (!scans.empty()) {
    info.scan_info = scans.data();
    info.num_scans = static_cast<int>(scans.size());
  }
  auto pixels = small_rgb();
  jpeg_start_compress(&info, TRUE);
  for (JDIMENSION row = 0; row < 8; ++row) {
    JSAMPROW line = pixels.data() + row * 8 * 3;
    jpeg_write_scanlines(&info, &line, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  std::string bytes(reinterpret_cast<const char*>(encoded), size);
  std::free(encoded);
  return bytes;
}

// A JPEG of 8 x 8 pixels whose frame header (SOF) declares width x height
// (JPEG's sides are 16-bit, so at most 65535 each).
inline std::string jpeg_declaring(std::uint16_t width, std::uint16_t height) {
  std::string bytes = small_jpeg();
  // SOF0: FF C0, length (2), precision (1), height (2), width (2).
  const auto sof = bytes.find("\xFF\xC0");
  if (sof == std::string::npos) throw std::runtime_error("the test JPEG has no SOF0 marker");
  put_big_endian(bytes, sof + 5, height, 2);
  put_big_endian(bytes, sof + 7, width, 2);
  return bytes;
}

}  // namespace orchestrate::testing

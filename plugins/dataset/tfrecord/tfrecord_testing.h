// Helpers the tfrecord tests share: whole-file bytes, damage, and PNG
// images to put in records.
#pragma once

#include <ATen/ATen.h>
#include <png.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace orchestrate::tfrecord::testing {

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Inverts every bit of the byte at `offset`.
inline void flip_byte(const std::string& path, std::uint64_t offset) {
  auto bytes = read_bytes(path);
  ASSERT_LT(offset, bytes.size());
  bytes[offset] = static_cast<char>(~bytes[offset]);
  write_bytes(path, bytes);
}

inline void truncate_to(const std::string& path, std::uint64_t size) {
  write_bytes(path, read_bytes(path).substr(0, size));
}

// uint8 [H, W, C] (C = 1 or 3) as a PNG file's bytes, with libpng's simplified API.
inline std::string encode_png(const at::Tensor& pixels) {
  const auto data = pixels.contiguous();
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(data.size(1));
  image.height = static_cast<png_uint_32>(data.size(0));
  image.format = data.size(2) == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  png_alloc_size_t size = 0;
  EXPECT_TRUE(png_image_write_get_memory_size(image, size, 0, data.data_ptr<std::uint8_t>(), 0, nullptr));
  std::string bytes(size, '\0');
  EXPECT_TRUE(png_image_write_to_memory(&image, bytes.data(), &size, 0, data.data_ptr<std::uint8_t>(), 0, nullptr))
      << image.message;
  bytes.resize(size);
  return bytes;
}

// A grey 28x28 image that differs for every `seed`.
inline at::Tensor test_image(std::int64_t seed, std::int64_t channels = 1, std::int64_t side = 28) {
  return at::arange(side * side * channels, at::kLong).mul(seed * 7 + 3).add(seed).remainder(256).to(at::kByte).reshape(
      {side, side, channels});
}

}  // namespace orchestrate::tfrecord::testing

// Small images for dataset tests: predictable pixels, written as PNG with
// libpng's simplified API (the test target links libpng through core/image).
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <png.h>

#include <cstdint>
#include <string>

namespace orchestrate::testing {

// uint8 [H, W, C] (C = 1 or 3) as a PNG file's bytes.
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

}  // namespace orchestrate::testing

// Helpers the tfrecord tests share: whole-file bytes, damage, and PNG
// images to put in records (test_images.h).
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "test_images.h"

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

using orchestrate::testing::encode_png;
using orchestrate::testing::test_image;

}  // namespace orchestrate::tfrecord::testing

// Tests' helpers that read, write and damage files byte by byte: what the
// framing tests and the dataset plugin's tests do to record files.
#pragma once

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

}  // namespace orchestrate::tfrecord::testing

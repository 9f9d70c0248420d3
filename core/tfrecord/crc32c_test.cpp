#include "crc32c.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace orchestrate::tfrecord {
namespace {

std::string ascending(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out.push_back(static_cast<char>(i));
  return out;
}

// The check value of the CRC-32C catalogue and the vectors of RFC 3720, B.4.
struct Vector {
  std::string data;
  std::uint32_t crc;
  std::uint32_t masked;  // as TensorFlow stores it (computed by tensorboard's masked_crc32c)
};

std::vector<Vector> known_vectors() {
  std::string descending = ascending(32);
  std::reverse(descending.begin(), descending.end());
  return {
      {"", 0x00000000, 0xa282ead8},
      {"a", 0xc1d04330, 0x28e46e78},
      {"123456789", 0xe3069283, 0xc78ab0e5},
      {std::string(32, '\0'), 0x8a9136aa, 0x0fd7fffa},
      {std::string(32, '\xff'), 0x62a8ab43, 0xf909b029},
      {ascending(32), 0x46dd794e, 0x951f7892},
      {descending, 0x113fdb5c, 0x593b0d57},
  };
}

using Implementation = std::uint32_t (*)(std::uint32_t, const void*, std::size_t);

void expect_known_vectors(Implementation crc) {
  for (const auto& vector : known_vectors()) {
    SCOPED_TRACE(vector.data.size());
    EXPECT_EQ(crc(0, vector.data.data(), vector.data.size()), vector.crc);
  }
}

TEST(Crc32c, PortableMatchesKnownVectors) { expect_known_vectors(crc32c_extend_portable); }

// The SSE4.2 path where this CPU has the instruction; where it has not, the
// dispatcher must use the portable path, which is then the one checked.
TEST(Crc32c, TheHardwarePathOrItsFallbackMatchesKnownVectors) {
  if (crc32c_hardware_available()) {
    expect_known_vectors(crc32c_extend_hardware);
  } else {
    for (const auto& vector : known_vectors())
      EXPECT_EQ(crc32c(vector.data), crc32c_extend_portable(0, vector.data.data(), vector.data.size()));
  }
}

TEST(Crc32c, DispatchedAndMaskedMatchKnownVectors) {
  for (const auto& vector : known_vectors()) {
    EXPECT_EQ(crc32c(vector.data), vector.crc);
    EXPECT_EQ(masked_crc32c(vector.data), vector.masked);
  }
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
}

// Every length around the 8-byte steps and every alignment, on random bytes.
TEST(Crc32c, HardwareAndPortableAgreeOnAnyLengthAndAlignment) {
  // Without SSE4.2 the dispatched CRC (the portable one) is compared instead.
  const auto fast = crc32c_hardware_available() ? crc32c_extend_hardware : crc32c_extend;
  std::mt19937 random(7);
  std::string buffer(4096 + 16, '\0');
  for (auto& byte : buffer) byte = static_cast<char>(random());
  for (std::size_t start = 0; start < 8; ++start)
    for (std::size_t length : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4096}) {
      const char* data = buffer.data() + start;
      EXPECT_EQ(fast(0, data, length), crc32c_extend_portable(0, data, length))
          << "start " << start << " length " << length;
    }
}

TEST(Crc32c, ExtendingPieceByPieceEqualsTheWhole) {
  const std::string text = "The quick brown fox jumps over the lazy dog";
  for (std::size_t split = 0; split <= text.size(); ++split) {
    const std::uint32_t head = crc32c(text.substr(0, split));
    EXPECT_EQ(crc32c_extend(head, text.data() + split, text.size() - split), crc32c(text));
    EXPECT_EQ(crc32c_extend_portable(crc32c_extend_portable(0, text.data(), split), text.data() + split,
                                     text.size() - split),
              crc32c(text));
  }
}

}  // namespace
}  // namespace orchestrate::tfrecord

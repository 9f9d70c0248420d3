#include "crc32c.h"

#include <array>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace orchestrate::tfrecord {

namespace {

constexpr std::uint32_t kReflectedPolynomial = 0x82F63B78;  // Castagnoli's, bit-reversed
constexpr std::uint32_t kMaskDelta = 0xa282ead8;             // TensorFlow's (crc32c.h)

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (crc & 1 ? kReflectedPolynomial : 0);
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<std::uint32_t, 256> kTable = make_table();

}  // namespace

std::uint32_t crc32c_extend_portable(std::uint32_t crc, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i) crc = kTable[(crc ^ bytes[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

#if defined(__x86_64__)

bool crc32c_hardware_available() { return __builtin_cpu_supports("sse4.2"); }

// Compiled for SSE4.2 on its own, so the rest of the library runs on any x86-64.
__attribute__((target("sse4.2"))) std::uint32_t crc32c_extend_hardware(std::uint32_t crc, const void* data,
                                                                       std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::uint64_t state = ~crc;
  for (; size >= 8; bytes += 8, size -= 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes, 8);  // unaligned-safe; the crc32 instruction wants little-endian, as x86 is
    state = _mm_crc32_u64(state, word);
  }
  auto narrow = static_cast<std::uint32_t>(state);
  for (; size > 0; ++bytes, --size) narrow = _mm_crc32_u8(narrow, *bytes);
  return ~narrow;
}

#else

bool crc32c_hardware_available() { return false; }

std::uint32_t crc32c_extend_hardware(std::uint32_t crc, const void* data, std::size_t size) {
  return crc32c_extend_portable(crc, data, size);
}

#endif

std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t size) {
  static const bool hardware = crc32c_hardware_available();
  return hardware ? crc32c_extend_hardware(crc, data, size) : crc32c_extend_portable(crc, data, size);
}

std::uint32_t mask_crc(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

std::string crc_text(std::uint32_t crc) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", crc);
  return text;
}

}  // namespace orchestrate::tfrecord

// The two checks of TensorFlow's record framing, on bytes already in memory:
// whether a 12-byte header's length matches its masked CRC-32C, and whether
// a record's data matches the CRC that follows it. The scanner, the
// resynchronisation after damage and reads at known offsets all use these,
// and a fuzz target can call them on any buffer (no files, no LibTorch).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace orchestrate::tfrecord {

inline constexpr std::uint64_t kRecordHeaderBytes = 12;  // length and its CRC
inline constexpr std::uint64_t kRecordFooterBytes = 4;   // the data's CRC
inline constexpr std::uint64_t framed_size(std::uint64_t data_bytes) {
  return kRecordHeaderBytes + data_bytes + kRecordFooterBytes;
}

// The format is little-endian whatever the host is.
std::uint32_t little_endian_u32(const char* bytes);
std::uint64_t little_endian_u64(const char* bytes);
void put_little_endian_u32(char* out, std::uint32_t value);
void put_little_endian_u64(char* out, std::uint64_t value);

// The length a header stores when its CRC matches; nullopt otherwise, or
// when `header` holds fewer than kRecordHeaderBytes.
std::optional<std::uint64_t> trusted_length(std::string_view header);

// Why a header's length is not to be trusted ("bad length CRC (stored
// 0x..., computed 0x...)"), or "" when its CRC matches. `header` holds
// kRecordHeaderBytes.
std::string header_damage(std::string_view header);

// Why `data` does not match the CRC in `footer` (kRecordFooterBytes), or "".
std::string data_damage(std::string_view data, std::string_view footer);

}  // namespace orchestrate::tfrecord

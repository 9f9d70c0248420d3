#include "frame_checks.h"


#include "crc32c.h"

namespace orchestrate::tfrecord {

namespace {

std::uint32_t length_crc(std::string_view header) { return mask_crc(crc32c(header.substr(0, 8))); }

}  // namespace

std::uint32_t little_endian_u32(const char* bytes) {
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

std::uint64_t little_endian_u64(const char* bytes) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

void put_little_endian_u32(char* out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(value >> (8 * i));
}

void put_little_endian_u64(char* out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(value >> (8 * i));
}

std::optional<std::uint64_t> trusted_length(std::string_view header) {
  if (header.size() < kRecordHeaderBytes) return std::nullopt;
  if (little_endian_u32(header.data() + 8) != length_crc(header)) return std::nullopt;
  return little_endian_u64(header.data());
}

std::string header_damage(std::string_view header) {
  const std::uint32_t stored = little_endian_u32(header.data() + 8);
  const std::uint32_t computed = length_crc(header);
  if (stored == computed) return "";
  return "bad length CRC (stored " + crc_text(stored) + ", computed " + crc_text(computed) + ")";
}

std::string data_damage(std::string_view data, std::string_view footer) {
  const std::uint32_t stored = little_endian_u32(footer.data());
  const std::uint32_t computed = masked_crc32c(data);
  if (stored == computed) return "";
  return "bad data CRC (stored " + crc_text(stored) + ", computed " + crc_text(computed) + ")";
}

}  // namespace orchestrate::tfrecord

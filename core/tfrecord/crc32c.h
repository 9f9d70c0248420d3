// CRC-32C (Castagnoli), the checksum of TensorFlow's record format.
//
// Written here because no Debian package provides it as a C or C++ library
// (zlib's crc32 uses the other polynomial; Google's crc32c library is not
// packaged). It is small: the SSE4.2 crc32 instruction computes exactly this
// CRC, 8 bytes per instruction, when the CPU has it (checked at run time, so
// one binary runs everywhere), and a lookup table covers the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace orchestrate::tfrecord {

// The CRC-32C of `size` bytes following earlier bytes whose CRC-32C is `crc`
// (0 for none), so a CRC can be computed piecewise.
std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t size);

inline std::uint32_t crc32c(std::string_view bytes) { return crc32c_extend(0, bytes.data(), bytes.size()); }

// "0x1a2b3c4d": a CRC as error messages show it.
std::string crc_text(std::uint32_t crc);

// TensorFlow stores CRCs masked (rotated right by 15 bits, plus a constant),
// because a CRC of bytes that embed CRCs is otherwise prone to being trivial.
std::uint32_t mask_crc(std::uint32_t crc);
inline std::uint32_t masked_crc32c(std::string_view bytes) { return mask_crc(crc32c(bytes)); }

// The two implementations behind crc32c_extend, so tests can check both on a
// machine that would only ever run one.
std::uint32_t crc32c_extend_portable(std::uint32_t crc, const void* data, std::size_t size);
bool crc32c_hardware_available();
// Only call when crc32c_hardware_available().
std::uint32_t crc32c_extend_hardware(std::uint32_t crc, const void* data, std::size_t size);

}  // namespace orchestrate::tfrecord

// The safetensors header (core/checkpoint/safetensors_header): the JSON a
// weights file from a model hub opens with. The input's first 8 bytes are
// the size of the tensor data after the header (little-endian), the rest is
// the header. A damaged header must surface as orchestrate::Error; one that
// is accepted must tile the data exactly, as the reader then relies on.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "checkpoint/safetensors_header.h"
#include "orchestrate/error.h"

namespace format = orchestrate::safetensors_format;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < format::kLengthPrefixBytes) return 0;
  std::uint64_t data_bytes = 0;
  std::memcpy(&data_bytes, data, sizeof data_bytes);
  const std::string_view header(reinterpret_cast<const char*>(data) + 8, size - 8);
  try {
    auto parsed = format::parse_header("fuzz.safetensors", header, data_bytes);
    std::sort(parsed.entries.begin(), parsed.entries.end(),
              [](const auto& a, const auto& b) { return a.begin < b.begin || (a.begin == b.begin && a.end < b.end); });
    std::uint64_t covered = 0;
    for (const auto& entry : parsed.entries) {
      if (entry.begin != covered || entry.end < entry.begin) __builtin_trap();
      covered = entry.end;
    }
    if (covered != data_bytes) __builtin_trap();
  } catch (const orchestrate::Error&) {
  }
  return 0;
}

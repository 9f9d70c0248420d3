// The safetensors header: dtype names and the JSON that describes the tensors,
// parsed and checked against the size of the file's data. Internal to
// orchestrate_checkpoint; the public API is safetensors.h.
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orchestrate {

// "[10, 84]": a tensor's shape as error messages and records show it.
// Defined in safetensors_header.cpp, which the fuzz build compiles without
// ATen; safetensors.h declares it too, for the code that holds tensors (next
// time that header changes anyway, it should include this one instead).
std::string shape_text(c10::IntArrayRef sizes);

}  // namespace orchestrate

namespace orchestrate::safetensors_format {

// Limits of the reference implementation: the 8-byte little-endian header
// length, and the largest header it accepts (anything above is not a real file).
inline constexpr std::uint64_t kLengthPrefixBytes = 8;
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

// The format's dtype name for a LibTorch type ("F32"), or nothing when the
// format cannot store it.
std::optional<std::string_view> dtype_name(c10::ScalarType type);
// The LibTorch type of a format dtype name, or nothing when LibTorch has none.
std::optional<c10::ScalarType> dtype_from_name(std::string_view name);
// "F64, F32, ...": for messages.
std::string supported_dtype_names();

struct HeaderEntry {
  std::string name;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  // data_offsets, relative to the start of the data
  std::uint64_t end = 0;
};

struct Header {
  std::vector<HeaderEntry> entries;  // sorted by name
  std::map<std::string, std::string> metadata;
};

// Parses `json` (the header bytes, space padding allowed) and checks that the
// entries tile a data buffer of `data_bytes` exactly. Throws DataError whose
// message starts with `path`.
Header parse_header(const std::string& path, std::string_view json, std::uint64_t data_bytes);

}  // namespace orchestrate::safetensors_format

// Parsing and checking the safetensors header. The checks follow the reference
// implementation (safetensors' Rust crate): the header is a JSON object
// starting with '{'; each tensor has a known dtype, a shape and data_offsets
// whose span is exactly shape x element size; the spans tile the data with no
// hole, overlap or trailing byte. Unknown keys inside a tensor's entry are
// ignored, as the reference does, so files from newer writers still load.
#include "checkpoint/safetensors_header.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "limits/nesting_check.h"
#include "orchestrate/error.h"

namespace orchestrate {

std::string shape_text(c10::IntArrayRef sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

}  // namespace orchestrate

namespace orchestrate::safetensors_format {
namespace {

using nlohmann::json;

struct DtypeEntry {
  std::string_view name;
  c10::ScalarType type;
};

// Every dtype both the format and LibTorch have, named as Python's
// safetensors.torch maps them. The format's F4 and F6 types have no LibTorch
// counterpart (float4_e2m1fn_x2 packs two values per byte) and are refused.
constexpr std::array<DtypeEntry, 19> kDtypes{{
    {"F64", c10::ScalarType::Double},
    {"F32", c10::ScalarType::Float},
    {"F16", c10::ScalarType::Half},
    {"BF16", c10::ScalarType::BFloat16},
    {"I64", c10::ScalarType::Long},
    {"I32", c10::ScalarType::Int},
    {"I16", c10::ScalarType::Short},
    {"I8", c10::ScalarType::Char},
    {"U64", c10::ScalarType::UInt64},
    {"U32", c10::ScalarType::UInt32},
    {"U16", c10::ScalarType::UInt16},
    {"U8", c10::ScalarType::Byte},
    {"BOOL", c10::ScalarType::Bool},
    {"C64", c10::ScalarType::ComplexFloat},
    {"F8_E4M3", c10::ScalarType::Float8_e4m3fn},
    {"F8_E5M2", c10::ScalarType::Float8_e5m2},
    {"F8_E4M3FNUZ", c10::ScalarType::Float8_e4m3fnuz},
    {"F8_E5M2FNUZ", c10::ScalarType::Float8_e5m2fnuz},
    {"F8_E8M0", c10::ScalarType::Float8_e8m0fnu},
}};

constexpr std::string_view kDamaged = "the file is damaged or was not written by a safetensors writer";

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw DataError(path + ": " + problem);
}

// nlohmann keeps the last of duplicate keys silently; a header naming a tensor
// twice is ambiguous, so the parse callback refuses duplicates at every level.
json parse_rejecting_duplicate_keys(const std::string& path, std::string_view text) {
  std::vector<std::set<std::string>> open_objects;
  const json::parser_callback_t check_keys = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open_objects.emplace_back();
    if (event == json::parse_event_t::object_end) open_objects.pop_back();
    if (event == json::parse_event_t::key && !open_objects.back().insert(parsed.get<std::string>()).second)
      fail(path, "header has the key \"" + parsed.get<std::string>() + "\" twice in one object; " +
                     std::string(kDamaged));
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), check_keys);
  } catch (const json::exception& e) {
    std::string reason = e.what();  // quotes the bytes it stopped at: keep the message on one line
    std::replace_if(reason.begin(), reason.end(), [](unsigned char c) { return c < 0x20; }, ' ');
    fail(path, "header is not valid JSON (" + reason + "); " + std::string(kDamaged));
  }
}

std::map<std::string, std::string> parse_metadata(const std::string& path, const json& value) {
  const std::string problem = "\"__metadata__\" must be an object of string values (" + value.dump() + "); ";
  if (!value.is_object()) fail(path, problem + std::string(kDamaged));
  std::map<std::string, std::string> metadata;
  for (const auto& [key, text] : value.items()) {
    if (!text.is_string()) fail(path, problem + std::string(kDamaged));
    metadata.emplace(key, text.get<std::string>());
  }
  return metadata;
}

HeaderEntry parse_entry(const std::string& path, const std::string& name, const json& value) {
  const std::string where = "tensor '" + name + "': ";
  if (!value.is_object())
    fail(path, where + "header entry is not an object with dtype, shape and data_offsets; " + std::string(kDamaged));
  HeaderEntry entry;
  entry.name = name;

  const auto dtype = value.find("dtype");
  if (dtype == value.end() || !dtype->is_string())
    fail(path, where + "\"dtype\" is missing or not a string; " + std::string(kDamaged));
  const auto type = dtype_from_name(dtype->get<std::string>());
  if (!type)
    fail(path, where + "dtype '" + dtype->get<std::string>() + "' is not one LibTorch can hold (supported: " +
                   supported_dtype_names() + "); convert the tensor to a supported dtype and save it again");
  entry.dtype = *type;

  const auto shape = value.find("shape");
  const auto is_dimension = [](const json& d) {
    return d.is_number_unsigned() && d.get<std::uint64_t>() <= std::numeric_limits<std::int64_t>::max();
  };
  if (shape == value.end() || !shape->is_array() || !std::all_of(shape->begin(), shape->end(), is_dimension))
    fail(path, where + "\"shape\" must be a list of non-negative integers; " + std::string(kDamaged));
  for (const auto& d : *shape) entry.shape.push_back(d.get<std::int64_t>());

  const auto offsets = value.find("data_offsets");
  if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned() ||
      (*offsets)[0].get<std::uint64_t>() > (*offsets)[1].get<std::uint64_t>())
    fail(path, where + "\"data_offsets\" must be [BEGIN, END] with 0 <= BEGIN <= END; " + std::string(kDamaged));
  entry.begin = (*offsets)[0].get<std::uint64_t>();
  entry.end = (*offsets)[1].get<std::uint64_t>();

  // A zero dimension makes the tensor empty however large the others are.
  const bool empty = std::find(entry.shape.begin(), entry.shape.end(), 0) != entry.shape.end();
  std::uint64_t bytes = empty ? 0 : c10::elementSize(entry.dtype);
  for (const std::int64_t d : entry.shape)
    if (__builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d), &bytes))
      fail(path, where + "shape " + shape_text(entry.shape) + " is too large to address; " + std::string(kDamaged));
  if (bytes != entry.end - entry.begin)
    fail(path, where + "shape " + shape_text(entry.shape) + " of " + dtype->get<std::string>() + " needs " +
                   std::to_string(bytes) + " bytes, data_offsets [" + std::to_string(entry.begin) + ", " +
                   std::to_string(entry.end) + "] span " + std::to_string(entry.end - entry.begin) + "; " +
                   std::string(kDamaged));
  return entry;
}

// The spans, in offset order, must tile [0, data_bytes) exactly.
void check_layout(const std::string& path, const std::vector<HeaderEntry>& entries, std::uint64_t data_bytes) {
  std::vector<const HeaderEntry*> by_offset;
  for (const auto& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto* a, const auto* b) { return std::tie(a->begin, a->end) < std::tie(b->begin, b->end); });
  std::uint64_t covered = 0;
  const HeaderEntry* previous = nullptr;
  for (const auto* e : by_offset) {
    if (e->begin < covered)
      fail(path, "tensors '" + previous->name + "' and '" + e->name + "' overlap: '" + previous->name +
                     "' ends at byte " + std::to_string(covered) + ", '" + e->name + "' begins at " +
                     std::to_string(e->begin) + " (data_offsets); " + std::string(kDamaged));
    if (e->begin > covered)
      fail(path, "bytes " + std::to_string(covered) + " to " + std::to_string(e->begin) +
                     " of the tensor data belong to no tensor (a hole before '" + e->name + "'); " +
                     std::string(kDamaged));
    covered = e->end;
    previous = e;
  }
  if (covered > data_bytes)
    fail(path, "truncated: header says " + std::to_string(covered) + " bytes of tensor data, the file has " +
                   std::to_string(data_bytes) + " after the header; the file is incomplete, copy it again");
  if (covered < data_bytes)
    fail(path, std::to_string(data_bytes - covered) + " trailing bytes after the tensor data (the header covers " +
                   std::to_string(covered) + " of " + std::to_string(data_bytes) + "); " + std::string(kDamaged));
}

}  // namespace

std::optional<std::string_view> dtype_name(c10::ScalarType type) {
  for (const auto& d : kDtypes)
    if (d.type == type) return d.name;
  return std::nullopt;
}

std::optional<c10::ScalarType> dtype_from_name(std::string_view name) {
  for (const auto& d : kDtypes)
    if (d.name == name) return d.type;
  return std::nullopt;
}

std::string supported_dtype_names() {
  std::string names;
  for (const auto& d : kDtypes) names += (names.empty() ? "" : ", ") + std::string(d.name);
  return names;
}

Header parse_header(const std::string& path, std::string_view text, std::uint64_t data_bytes) {
  // The reference refuses leading whitespace too; a header must open the object.
  if (text.empty() || text.front() != '{')
    fail(path, "header does not start with '{'; " + std::string(kDamaged));
  check_json_nesting(text, path);  // nlohmann prints (dump) recursively
  const json root = parse_rejecting_duplicate_keys(path, text);
  if (!root.is_object()) fail(path, "header is not a JSON object; " + std::string(kDamaged));
  Header header;
  for (const auto& [name, value] : root.items()) {  // nlohmann::json iterates keys sorted
    if (name == "__metadata__")
      header.metadata = parse_metadata(path, value);
    else
      header.entries.push_back(parse_entry(path, name, value));
  }
  check_layout(path, header.entries, data_bytes);
  return header;
}

}  // namespace orchestrate::safetensors_format

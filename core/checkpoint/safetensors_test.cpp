#include "checkpoint/safetensors.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>

#include "checkpoint/safetensors_testing.h"
#include "orchestrate/error.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

using testing::expect_same_tensor;
using testing::ScratchDir;

// Every dtype the format and LibTorch share.
const std::vector<at::ScalarType> kSupportedTypes = {
    at::kDouble, at::kFloat, at::kHalf, at::kBFloat16, at::kLong, at::kInt, at::kShort, at::kChar,
    at::kUInt64, at::kUInt32, at::kUInt16, at::kByte, at::kBool, at::kComplexFloat,
    at::kFloat8_e4m3fn, at::kFloat8_e5m2, at::kFloat8_e4m3fnuz, at::kFloat8_e5m2fnuz, at::kFloat8_e8m0fnu};

NamedTensors round_trip(const NamedTensors& content) {
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  write_safetensors(path, content);
  return read_safetensors(path);
}

void expect_same_content(const NamedTensors& actual, const NamedTensors& expected) {
  ASSERT_EQ(actual.tensors.size(), expected.tensors.size());
  for (std::size_t i = 0; i < actual.tensors.size(); ++i) {
    EXPECT_EQ(actual.tensors[i].first, expected.tensors[i].first);
    expect_same_tensor(actual.tensors[i].second, expected.tensors[i].second, expected.tensors[i].first);
  }
  EXPECT_EQ(actual.metadata, expected.metadata);
}

TEST(SafetensorsRoundTrip, EveryDtypeKeepsItsValuesAndShape) {
  NamedTensors content;
  for (const auto type : kSupportedTypes)
    content.tensors.emplace_back(std::string("t_") + c10::toString(type),
                                 torch::arange(1, 7, torch::kFloat).reshape({2, 3}).to(type));
  std::sort(content.tensors.begin(), content.tensors.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  expect_same_content(round_trip(content), content);
}

TEST(SafetensorsRoundTrip, ScalarsAndEmptyTensors) {
  NamedTensors content;
  content.tensors = {{"bool_scalar", torch::tensor(true)},
                     {"empty", torch::zeros({0})},
                     {"empty_middle", torch::zeros({3, 0, 2}, torch::kBFloat16)},
                     {"scalar", torch::tensor(2.5, torch::kDouble)}};
  const NamedTensors back = round_trip(content);
  expect_same_content(back, content);
  EXPECT_EQ(back.tensors[3].second.dim(), 0);
  EXPECT_DOUBLE_EQ(back.tensors[3].second.item<double>(), 2.5);
}

TEST(SafetensorsRoundTrip, NonContiguousAndSparseTensorsAreStoredByValue) {
  const auto base = torch::arange(24, torch::kFloat).reshape({4, 6});
  NamedTensors content;
  content.tensors = {{"expanded", torch::arange(3, torch::kInt).expand({2, 3})},
                     {"sliced", base.slice(1, 0, 6, 2)},
                     {"sparse", base.to_sparse()},
                     {"transposed", base.t()}};
  const NamedTensors back = round_trip(content);
  ASSERT_EQ(back.tensors.size(), 4u);
  for (std::size_t i = 0; i < back.tensors.size(); ++i) {
    const auto& original = content.tensors[i].second;
    const auto expected = original.layout() == at::kStrided ? original : original.to_dense();
    EXPECT_TRUE(back.tensors[i].second.is_contiguous());
    EXPECT_TRUE(torch::equal(back.tensors[i].second, expected)) << content.tensors[i].first;
  }
}

TEST(SafetensorsRoundTrip, MetadataSurvivesAndIsOptional) {
  NamedTensors content;
  content.tensors = {{"w", torch::ones({2})}};
  EXPECT_TRUE(round_trip(content).metadata.empty());
  content.metadata = {{"format", "pt"}, {"step", "1200"}, {"note", "ünïcode \"quoted\""}};
  expect_same_content(round_trip(content), content);
}

TEST(SafetensorsRoundTrip, TensorsComeBackSortedByName) {
  NamedTensors content;
  content.tensors = {{"z.bias", torch::zeros({2}, torch::kHalf)},
                     {"a.weight", torch::ones({2, 2}, torch::kDouble)},
                     {"m.mask", torch::ones({3}, torch::kBool)}};
  const NamedTensors back = round_trip(content);
  ASSERT_EQ(back.tensors.size(), 3u);
  EXPECT_EQ(back.tensors[0].first, "a.weight");
  EXPECT_EQ(back.tensors[1].first, "m.mask");
  EXPECT_EQ(back.tensors[2].first, "z.bias");
}

TEST(SafetensorsRoundTrip, HeaderAloneGivesNamesDtypesAndShapes) {
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  NamedTensors content;
  content.tensors = {{"fc.weight", torch::zeros({10, 64}, torch::kBFloat16)}, {"fc.bias", torch::zeros({10})}};
  write_safetensors(path, content);
  const auto infos = read_safetensors_header(path);
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].name, "fc.bias");
  EXPECT_EQ(infos[0].dtype, at::kFloat);
  EXPECT_EQ(infos[0].shape, std::vector<std::int64_t>{10});
  EXPECT_EQ(infos[1].name, "fc.weight");
  EXPECT_EQ(infos[1].dtype, at::kBFloat16);
  EXPECT_EQ(infos[1].shape, (std::vector<std::int64_t>{10, 64}));
}

TEST(SafetensorsRoundTrip, ManyMegabytesMatchExactly) {
  NamedTensors content;
  content.tensors = {{"big", torch::randn({4 * 1024 * 1024})}, {"odd", torch::randint(0, 255, {12345}, torch::kByte)}};
  expect_same_content(round_trip(content), content);
}

// Tensors sit at multiples of their element size, so readers that map the file
// (Python's safe_open, numpy) can view them in place.
TEST(SafetensorsLayout, HeaderIsPaddedToEightAndEveryTensorIsAligned) {
  ScratchDir dir;
  const std::string path = dir.file("model.safetensors");
  NamedTensors content;
  content.tensors = {{"a_byte", torch::ones({3}, torch::kByte)},
                     {"b_half", torch::ones({3}, torch::kHalf)},
                     {"c_double", torch::ones({3}, torch::kDouble)},
                     {"d_float", torch::ones({1}, torch::kFloat)}};
  write_safetensors(path, content);
  std::ifstream in(path, std::ios::binary);
  std::uint64_t header_bytes = 0;
  in.read(reinterpret_cast<char*>(&header_bytes), 8);
  EXPECT_EQ(header_bytes % 8, 0u);
  std::string header(header_bytes, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_bytes));
  const auto parsed = nlohmann::json::parse(header);
  for (const auto& [name, entry] : parsed.items()) {
    const auto type = safetensors_format::dtype_from_name(entry.at("dtype").get<std::string>());
    ASSERT_TRUE(type) << name;
    EXPECT_EQ(entry.at("data_offsets")[0].get<std::uint64_t>() % c10::elementSize(*type), 0u) << name;
  }
}

void expect_write_fails(const NamedTensors& content, const std::string& problem) {
  ScratchDir dir;
  const std::string path = dir.file("out.safetensors");
  try {
    write_safetensors(path, content);
    ADD_FAILURE() << "writing succeeded; expected: " << problem;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(problem), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path)) << "a refused write must not create the file";
}

TEST(SafetensorsWrite, RefusesBadNamesUndefinedTensorsAndUnsupportedDtypes) {
  const auto t = torch::ones({1});
  expect_write_fails({{{"w", t}, {"w", t}}, {}}, "'w' appears twice");
  expect_write_fails({{{"", t}}, {}}, "empty name");
  expect_write_fails({{{"__metadata__", t}}, {}}, "cannot be named \"__metadata__\"");
  expect_write_fails({{{"w", at::Tensor()}}, {}}, "'w' is undefined");
  expect_write_fails({{{"w", torch::ones({1}, torch::kComplexDouble)}}, {}},
                     "ComplexDouble, which safetensors cannot store");
}

TEST(SafetensorsWrite, ReplacesAnExistingFile) {
  ScratchDir dir;
  const std::string path = dir.write("model.safetensors", std::string(10000, 'x'));
  NamedTensors content;
  content.tensors = {{"w", torch::ones({2})}};
  write_safetensors(path, content);
  expect_same_content(read_safetensors(path), content);
}

// --- Damaged files: every reader refuses them with the file and the problem -----

// `header` framed with its length (or `length`) and followed by `data`.
std::string write_raw(const ScratchDir& dir, const std::string& header, const std::string& data = "",
                      std::optional<std::uint64_t> length = std::nullopt) {
  std::string bytes(8, '\0');
  const std::uint64_t n = length.value_or(header.size());
  std::memcpy(bytes.data(), &n, 8);
  return dir.write("damaged.safetensors", bytes + header + data);
}

const std::string kEightBytes(8, '\1');
const std::string kOneTensor = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";

void expect_read_fails(const std::string& path, std::initializer_list<std::string> parts) {
  for (const bool header_only : {false, true}) {
    try {
      header_only ? (void)read_safetensors_header(path) : (void)read_safetensors(path);
      ADD_FAILURE() << "reading succeeded (header_only=" << header_only << ")";
    } catch (const DataError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
    }
  }
}

TEST(SafetensorsDamaged, MissingFile) {
  ScratchDir dir;
  expect_read_fails(dir.file("absent.safetensors"), {"cannot open it", "No such file"});
}

TEST(SafetensorsDamaged, FileShorterThanTheLength) {
  ScratchDir dir;
  expect_read_fails(dir.write("short.safetensors", "abc"), {"too short", "3 bytes", "copy it again"});
}

TEST(SafetensorsDamaged, HeaderLengthBeyondTheFile) {
  ScratchDir dir;
  expect_read_fails(write_raw(dir, kOneTensor, kEightBytes, 4096),
                    {"truncated", "says 4096 bytes of JSON", "the file has 62 after", "copy it again"});
}

TEST(SafetensorsDamaged, AbsurdHeaderLength) {
  ScratchDir dir;
  expect_read_fails(write_raw(dir, kOneTensor, kEightBytes, 0x4000000000000000ull),
                    {"bad header length 4611686018427387904", "not a safetensors file"});
}

TEST(SafetensorsDamaged, InvalidJson) {
  ScratchDir dir;
  expect_read_fails(write_raw(dir, "{\"w\": {\"dtype\": \n", kEightBytes), {"header is not valid JSON", "damaged"});
  expect_read_fails(write_raw(dir, "PK\3\4 zip", kEightBytes), {"header does not start with '{'"});
  expect_read_fails(write_raw(dir, R"({"w": 3})", ""), {"tensor 'w'", "not an object"});
}

// A hub file whose __metadata__ nests 100,000 deep crashed the printer of
// the error message (nlohmann's recursive dump); now it is refused unparsed.
TEST(SafetensorsDamaged, DeeplyNestedMetadata) {
  ScratchDir dir;
  const std::string deep = R"({"__metadata__":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  expect_read_fails(write_raw(dir, deep, ""), {"JSON nested deeper than 64 levels at byte", "damaged"});
}

TEST(SafetensorsDamaged, UnknownDtype) {
  ScratchDir dir;
  expect_read_fails(write_raw(dir, R"({"w":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})", "\1"),
                    {"tensor 'w'", "dtype 'F4' is not one LibTorch can hold", "F64, F32", "convert"});
}

TEST(SafetensorsDamaged, ShapeDisagreesWithOffsets) {
  ScratchDir dir;
  expect_read_fails(write_raw(dir, R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", kEightBytes),
                    {"tensor 'w'", "shape [3] of F32 needs 12 bytes", "span 8"});
  expect_read_fails(write_raw(dir, R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", kEightBytes),
                    {"\"shape\" must be a list of non-negative integers"});
  expect_read_fails(write_raw(dir, R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", kEightBytes),
                    {"\"data_offsets\" must be [BEGIN, END]"});
}

TEST(SafetensorsDamaged, OverlappingOffsets) {
  ScratchDir dir;
  const std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  expect_read_fails(write_raw(dir, header, std::string(12, '\0')),
                    {"tensors 'a' and 'b' overlap", "'a' ends at byte 8, 'b' begins at 4"});
}

TEST(SafetensorsDamaged, HoleBetweenTensors) {
  ScratchDir dir;
  const std::string header = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})";
  expect_read_fails(write_raw(dir, header, std::string(12, '\0')), {"bytes 4 to 8", "belong to no tensor"});
}

TEST(SafetensorsDamaged, TruncatedData) {
  ScratchDir dir;
  expect_read_fails(write_raw(dir, kOneTensor, "\1\2\3"),
                    {"truncated: header says 8 bytes of tensor data, the file has 3 after the header",
                     "incomplete, copy it again"});
}

TEST(SafetensorsDamaged, TrailingBytes) {
  ScratchDir dir;
  expect_read_fails(write_raw(dir, kOneTensor, kEightBytes + "junk"), {"4 trailing bytes"});
}

TEST(SafetensorsDamaged, DuplicateNamesAndBadMetadata) {
  ScratchDir dir;
  const std::string twice = R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                            R"("w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  expect_read_fails(write_raw(dir, twice, "\1\2"), {"key \"w\" twice"});
  expect_read_fails(write_raw(dir, R"({"__metadata__":{"step":3}})", ""),
                    {"\"__metadata__\" must be an object of string values"});
}

// --- Parity with Python's safetensors, the reference implementation ----------

TEST(SafetensorsParity, FileWrittenByPythonReadsEqual) {
  ScratchDir dir;
  const std::string path = dir.file("python.safetensors");
  const auto reference = testing::run_safetensors_reference(R"(
from safetensors.torch import save_file
torch.manual_seed(0)
tensors = {
    "f64": torch.randn(2, 3, dtype=torch.float64), "f32": torch.randn(4, 5),
    "f16": torch.randn(3).half(), "bf16": torch.randn(2, 2).bfloat16(),
    "i64": torch.randint(-2**40, 2**40, (3,)), "i32": torch.randint(-1000, 1000, (2, 2), dtype=torch.int32),
    "i16": torch.randint(-300, 300, (4,), dtype=torch.int16), "i8": torch.randint(-100, 100, (4,), dtype=torch.int8),
    "u8": torch.randint(0, 255, (5,), dtype=torch.uint8), "bool": torch.rand(7) > 0.5,
    "u16": torch.randint(0, 60000, (3,)).to(torch.uint16), "u32": torch.randint(0, 2**31, (3,)).to(torch.uint32),
    "u64": torch.randint(0, 2**62, (3,)).to(torch.uint64),
    "f8_e4m3": torch.randn(4).to(torch.float8_e4m3fn), "f8_e5m2": torch.randn(4).to(torch.float8_e5m2),
    "c64": torch.randn(3, dtype=torch.complex64),
    "scalar": torch.tensor(3.5), "empty": torch.zeros(0, 4), "layer.0.weight": torch.randn(8, 3, 3),
}
metadata = {"format": "pt", "step": "42"}
save_file(tensors, )" + testing::python_string(path) + R"(, metadata=metadata)
print(json.dumps({"tensors": describe(tensors), "metadata": metadata}))
)");
  const NamedTensors content = read_safetensors(path);
  testing::expect_matches_description(content, reference.at("tensors"));
  EXPECT_EQ(content.metadata, (reference.at("metadata").get<std::map<std::string, std::string>>()));
}

TEST(SafetensorsParity, FileWrittenHereLoadsInPython) {
  ScratchDir dir;
  const std::string path = dir.file("ours.safetensors");
  torch::manual_seed(1);
  NamedTensors content;
  content.tensors = {{"f64", torch::randn({3, 2}, torch::kDouble)},
                     {"f32", torch::randn({5, 4}).t()},
                     {"f16", torch::randn({3}, torch::kHalf)},
                     {"bf16", torch::randn({2, 3}, torch::kBFloat16)},
                     {"i64", torch::randint(-1000000, 1000000, {4}, torch::kLong)},
                     {"i32", torch::randint(-1000, 1000, {2, 2}, torch::kInt)},
                     {"i16", torch::randint(-300, 300, {3}, torch::kShort)},
                     {"i8", torch::randint(-100, 100, {3}, torch::kChar)},
                     {"u8", torch::randint(0, 255, {6}, torch::kByte)},
                     {"bool", torch::rand({5}) > 0.5},
                     {"u16", torch::randint(0, 60000, {3}).to(torch::kUInt16)},
                     {"f8_e4m3", torch::randn({4}).to(at::kFloat8_e4m3fn)},
                     {"c64", torch::randn({2}, torch::kComplexFloat)},
                     {"scalar", torch::tensor(7, torch::kLong)},
                     {"empty", torch::zeros({2, 0})}};
  content.metadata = {{"format", "pt"}, {"epoch", "3"}};
  write_safetensors(path, content);
  const auto reference = testing::run_safetensors_reference(R"(
from safetensors import safe_open
from safetensors.torch import load_file
path = )" + testing::python_string(path) + R"(
with safe_open(path, framework="pt") as f:
    metadata = f.metadata()
print(json.dumps({"tensors": describe(load_file(path)), "metadata": metadata}))
)");
  testing::expect_matches_description(content, reference.at("tensors"));
  EXPECT_EQ(content.metadata, (reference.at("metadata").get<std::map<std::string, std::string>>()));
}

}  // namespace
}  // namespace orchestrate

// Interoperability with maintained TFRecord code that shares nothing with
// ours: tensorboard's RecordWriter and CRC-checking PyRecordReader_New for
// the framing, and the tfrecord package's example_pb2 (generated from
// TensorFlow's example.proto) for tf.train.Example. Both run at test time in
// the project's Python (scripts/setup installs them, pinned).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "build_paths.h"
#include "example.pb.h"
#include "orchestrate/dataset.h"
#include "orchestrate/testing/dataset_batches.h"
#include "orchestrate/testing/plugin_under_test.h"
#include "orchestrate/testing/python_reference.h"
#include "orchestrate/testing/scratch_dir.h"
#include "orchestrate/tfrecord/crc32c.h"
#include "orchestrate/tfrecord/record_framing.h"
#include "tfrecord_testing.h"

namespace orchestrate::tfrecord {
namespace {

using orchestrate::testing::run_python;
using orchestrate::testing::ScratchDir;
using testing::read_bytes;

std::string hex(std::string_view bytes) {
  std::string out;
  char pair[3];
  for (const unsigned char c : bytes) {
    std::snprintf(pair, sizeof pair, "%02x", c);
    out += pair;
  }
  return out;
}

std::uint32_t u32_at(const std::string& bytes, std::uint64_t offset) {
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[offset + i]);
  return value;
}

// One line per feature, keys sorted, values exact (floats as their bits), the
// same text the Python side prints for its own messages.
std::string canonical(const tensorflow::Example& example) {
  std::vector<std::string> keys;
  for (const auto& [key, feature] : example.features().feature()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  std::string out;
  for (const auto& key : keys) {
    const auto& feature = example.features().feature().at(key);
    out += key + " ";
    if (feature.has_bytes_list()) {
      out += "bytes";
      for (const auto& value : feature.bytes_list().value()) out += " " + hex(value);
    } else if (feature.has_float_list()) {
      out += "float";
      for (const float value : feature.float_list().value()) {
        std::uint32_t bits;
        std::memcpy(&bits, &value, 4);
        char text[9];
        std::snprintf(text, sizeof text, "%08x", bits);
        out += std::string(" ") + text;
      }
    } else if (feature.has_int64_list()) {
      out += "int64";
      for (const auto value : feature.int64_list().value()) out += " " + std::to_string(value);
    } else {
      out += "none";
    }
    out += ";";
  }
  return out;
}

constexpr const char* kCanonicalPython = R"(
import struct
def canonical(example):
    out = ""
    for key in sorted(example.features.feature):
        feature = example.features.feature[key]
        kind = feature.WhichOneof("kind")
        out += key + " "
        if kind == "bytes_list":
            out += "bytes" + "".join(" " + v.hex() for v in feature.bytes_list.value)
        elif kind == "float_list":
            out += "float" + "".join(" " + struct.pack(">f", v).hex() for v in feature.float_list.value)
        elif kind == "int64_list":
            out += "int64" + "".join(" " + str(v) for v in feature.int64_list.value)
        else:
            out += "none"
        out += ";"
    return out
)";

struct ExpectedRecord {
  std::uint64_t offset = 0;
  std::string data;
  std::uint32_t length_crc = 0;
  std::uint32_t data_crc = 0;
  std::string features;  // "-" for a payload that is no Example
};

// Lines "record OFFSET LENGTH_CRC DATA_CRC DATA_HEX FEATURES"; others are ignored.
std::vector<ExpectedRecord> parse_lines(const std::string& text) {
  std::vector<ExpectedRecord> records;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("record ", 0) != 0) continue;
    std::istringstream fields(line.substr(7));
    ExpectedRecord record;
    std::string data_hex;
    fields >> record.offset >> std::hex >> record.length_crc >> record.data_crc >> std::dec >> data_hex;
    std::getline(fields, record.features);
    record.features.erase(0, record.features.find_first_not_of(' '));
    if (data_hex == "-") data_hex.clear();
    for (std::size_t i = 0; i + 1 < data_hex.size(); i += 2)
      record.data.push_back(static_cast<char>(std::stoi(data_hex.substr(i, 2), nullptr, 16)));
    records.push_back(std::move(record));
  }
  return records;
}

// Examples of every feature kind with edge values, then payloads that are
// no Example: empty, one byte, and 100 kB (a multi-chunk read).
TEST(TfRecordInterop, RecordsFromTensorboardsWriterReadBackRecordForRecord) {
  ScratchDir dir;
  const std::string path = dir.file("independent.tfrecord");
  const std::string out = run_python(std::string(kCanonicalPython) + R"(
import random
from tensorboard.summary.writer.record_writer import RecordWriter
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c
from tfrecord import example_pb2
rng = random.Random(3)
records = []
for i in range(20):
    e = example_pb2.Example()
    f = e.features.feature
    f["image/encoded"].bytes_list.value.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 3000))))
    f["image/format"].bytes_list.value.append(b"png")
    f["image/class/label"].int64_list.value.append(i)
    f["ints"].int64_list.value.extend([-1, 0, 2**63 - 1, -2**63, i * 1000003])
    f["floats"].float_list.value.extend([0.5, -1e-30, float("inf"), 3.25 * i, 1 / 3])
    f["strings"].bytes_list.value.extend([b"", "\u00e9".encode(), b"\x00\xff"])
    f["empty"].int64_list.SetInParent()
    records.append((e.SerializeToString(), canonical(e)))
records += [(b"", "-"), (b"x", "-"), (bytes(rng.randrange(256) for _ in range(100000)), "-")]
offset = 0
with open(")" + path + R"(", "wb") as f:
    writer = RecordWriter(f)
    for data, features in records:
        writer.write(data)
        header = len(data).to_bytes(8, "little")
        print("record", offset, format(masked_crc32c(header), "x"), format(masked_crc32c(data), "x"),
              data.hex() or "-", features)
        offset += 12 + len(data) + 4
    writer.flush()
)");
  const auto expected = parse_lines(out);
  ASSERT_EQ(expected.size(), 23u) << out.substr(0, 2000);
  const std::string file = read_bytes(path);

  TfRecordScanner scanner(path);
  ScannedRecord record;
  std::size_t count = 0;
  const RecordFile random_access(path);
  while (scanner.next(record)) {
    ASSERT_LT(count, expected.size());
    const auto& want = expected[count];
    SCOPED_TRACE("record " + std::to_string(count));
    EXPECT_EQ(record.damage, "");
    EXPECT_EQ(record.place.index, count);
    EXPECT_EQ(record.place.offset, want.offset);
    EXPECT_EQ(record.data, want.data);
    // The stored CRCs are tensorboard's, and ours computes the same.
    EXPECT_EQ(u32_at(file, want.offset + 8), want.length_crc);
    EXPECT_EQ(u32_at(file, want.offset + 12 + want.data.size()), want.data_crc);
    EXPECT_EQ(masked_crc32c(record.data), want.data_crc);
    EXPECT_EQ(random_access.read_at(record.place, record.data.size()), want.data);
    if (want.features != "-") {
      tensorflow::Example example;
      ASSERT_TRUE(example.ParseFromString(record.data));
      EXPECT_EQ(canonical(example), want.features);
    }
    ++count;
  }
  EXPECT_EQ(count, expected.size());
}

class OurFileReadByTensorboard : public ::testing::Test {
 protected:
  void SetUp() override {
    offsets_.clear();
    written_.clear();
    TfRecordWriter writer(path_);
    for (int i = 0; i < 10; ++i) {
      tensorflow::Example example;
      auto& features = *example.mutable_features()->mutable_feature();
      features["image/encoded"].mutable_bytes_list()->add_value(std::string(100 + 37 * i, static_cast<char>(i)));
      features["image/class/label"].mutable_int64_list()->add_value(-i * 1000000007LL);
      for (const float value : {1.5f, -0.0f, 1e38f * i}) features["floats"].mutable_float_list()->add_value(value);
      features["multi"].mutable_bytes_list()->add_value("");
      features["multi"].mutable_bytes_list()->add_value(std::string("\0\xfe", 2));
      const std::string data = example.SerializeAsString();
      offsets_.push_back(writer.write(data));
      written_.push_back({offsets_.back(), data, 0, masked_crc32c(data), canonical(example)});
    }
    for (const std::string data : {std::string(), std::string(200000, 'z')}) {
      offsets_.push_back(writer.write(data));
      written_.push_back({offsets_.back(), data, 0, masked_crc32c(data), "-"});
    }
    writer.close();
  }

  // What tensorboard's reader makes of the file: its records, or its error.
  std::string read_with_tensorboard() const {
    return run_python(std::string(kCanonicalPython) + R"(
from tensorboard.compat.tensorflow_stub import errors, pywrap_tensorflow
from tfrecord import example_pb2
reader = pywrap_tensorflow.PyRecordReader_New(")" + path_ + R"(")
index = 0
try:
    while True:
        reader.GetNext()
        data = reader.record()
        features = "-"
        if index < 10:
            e = example_pb2.Example()
            e.ParseFromString(data)
            features = canonical(e)
        print("record 0 0 0", data.hex() or "-", features)
        index += 1
except errors.OutOfRangeError:
    print("end")
except errors.DataLossError as e:
    print("error after", index, "records:", e.message)
)");
  }

  ScratchDir dir_;
  std::string path_ = dir_.file("ours.tfrecord");
  std::vector<std::uint64_t> offsets_;
  std::vector<ExpectedRecord> written_;
};

TEST_F(OurFileReadByTensorboard, EveryRecordAndFeatureComesBackWithCrcsChecked) {
  const std::string out = read_with_tensorboard();
  const auto read = parse_lines(out);
  ASSERT_EQ(read.size(), written_.size()) << out.substr(0, 2000);
  for (std::size_t i = 0; i < read.size(); ++i) {
    SCOPED_TRACE("record " + std::to_string(i));
    EXPECT_EQ(read[i].data, written_[i].data);
    EXPECT_EQ(read[i].features, written_[i].features);
  }
  EXPECT_NE(out.find("\nend"), std::string::npos) << out.substr(out.size() - 200);
}

// Damage that our reader reports is damage tensorboard's reader reports too.
TEST_F(OurFileReadByTensorboard, BothReadersAgreeOnDamage) {
  testing::flip_byte(path_, offsets_[4] + kRecordHeaderBytes + 5);
  EXPECT_NE(read_with_tensorboard().find("error after 4 records: " + path_ + " failed event crc32 check"),
            std::string::npos);
  SetUp();
  testing::flip_byte(path_, offsets_[6] + 3);
  EXPECT_NE(read_with_tensorboard().find("error after 6 records: " + path_ + " failed header crc32 check"),
            std::string::npos);
  SetUp();
  testing::truncate_to(path_, offsets_[11] + 100);
  EXPECT_NE(read_with_tensorboard().find("error after 11 records: " + path_ + " has truncated record in data"),
            std::string::npos);
}

// scripts/convert_dataset (tensorboard's framing) read by the tfrecord
// dataset gives Fashion-MNIST's own pixels and labels, in the IDX order.
TEST(TfRecordInterop, ConvertedFashionMnistEqualsTheIdxFiles) {
  ScratchDir dir;
  const std::string out_dir = dir.file("converted");
  run_python(R"(
import runpy, sys
sys.argv = ["convert_dataset", "tfrecord", "--out", ")" + out_dir + R"(", "--limit", "50", "--train-shards", "3", "--test-shards", "2"]
runpy.run_path(")" + std::string(orchestrate::build_paths::kSourceDir) + R"(/scripts/convert_dataset", run_name="__main__")
)");
  run_python(R"(
import gzip
for split in ("train", "t10k"):
    images = gzip.open("/usr/share/datasets/fashion-mnist/%s-images-idx3-ubyte.gz" % split).read()[16:16 + 50 * 784]
    labels = gzip.open("/usr/share/datasets/fashion-mnist/%s-labels-idx1-ubyte.gz" % split).read()[8:8 + 50]
    open(")" + dir.file("") + R"(" + split + ".bin", "wb").write(images + labels)
)");
  auto& entry = orchestrate::testing::plugin_under_test().datasets().get("tfrecord");
  auto params = default_params(entry.info.schema);
  params.set("dir", out_dir);
  params.set("channels", std::int64_t{1});
  params.set("height", std::int64_t{28});
  params.set("width", std::int64_t{28});
  params.set("index_cache_dir", dir.file("cache"));
  for (const auto& [split, idx] : {std::pair{DatasetSplit::train, "train"}, std::pair{DatasetSplit::test, "t10k"}}) {
    SCOPED_TRACE(idx);
    const auto dataset = entry.create(params, split);
    ASSERT_EQ(dataset->size(), 50);
    EXPECT_EQ(dataset->info().num_classes, 10);
    std::vector<std::int64_t> all(50);
    for (int i = 0; i < 50; ++i) all[i] = i;
    const auto batch = orchestrate::testing::float_batch(*dataset, all);
    const std::string bytes = read_bytes(dir.file(std::string(idx) + ".bin"));
    ASSERT_EQ(bytes.size(), 50u * 785);
    const auto pixels = (batch.images * 255).round().to(at::kByte).contiguous();
    EXPECT_EQ(std::string(static_cast<const char*>(pixels.data_ptr()), 50 * 784), bytes.substr(0, 50 * 784));
    for (int i = 0; i < 50; ++i) EXPECT_EQ(batch.labels[i].item<std::int64_t>(), bytes[50 * 784 + i]) << i;
  }
}

// --format jpeg: records marked image/format "jpeg" whose images decode
// to Fashion-MNIST's within JPEG's loss at quality 95, labels exact.
TEST(TfRecordInterop, ConvertedToJpegReadsBackWithinJpegLoss) {
  ScratchDir dir;
  const std::string out_dir = dir.file("converted");
  run_python(R"(
import runpy, sys
sys.argv = ["convert_dataset", "tfrecord", "--out", ")" + out_dir + R"(", "--limit", "20", "--train-shards", "2", "--test-shards", "1", "--format", "jpeg", "--quality", "95"]
runpy.run_path(")" + std::string(orchestrate::build_paths::kSourceDir) + R"(/scripts/convert_dataset", run_name="__main__")
from tfrecord import example_pb2
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import PyRecordReader_New
reader = PyRecordReader_New(")" + out_dir + R"(/train-00000-of-00002")
reader.GetNext()
example = example_pb2.Example.FromString(reader.record())
assert example.features.feature["image/format"].bytes_list.value == [b"jpeg"], example.features.feature["image/format"]
import gzip
images = gzip.open("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz").read()[16:16 + 20 * 784]
labels = gzip.open("/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz").read()[8:8 + 20]
open(")" + dir.file("train.bin") + R"(", "wb").write(images + labels)
)");
  auto& entry = orchestrate::testing::plugin_under_test().datasets().get("tfrecord");
  auto params = default_params(entry.info.schema);
  params.set("dir", out_dir);
  params.set("channels", std::int64_t{1});
  params.set("index_cache_dir", std::string("off"));
  const auto dataset = entry.create(params, DatasetSplit::train);
  ASSERT_EQ(dataset->size(), 20);
  std::vector<std::int64_t> all(20);
  for (int i = 0; i < 20; ++i) all[i] = i;
  const auto batch = orchestrate::testing::float_batch(*dataset, all);
  const std::string bytes = read_bytes(dir.file("train.bin"));
  ASSERT_EQ(bytes.size(), 20u * 785);
  const auto expected = at::from_blob(const_cast<char*>(bytes.data()), {20, 1, 28, 28}, at::kByte).to(at::kFloat) / 255;
  // Quality 95 keeps the mean error near one grey level; the worst pixel, at an edge, further off.
  EXPECT_LT((batch.images - expected).abs().mean().item<double>(), 2.0 / 255) << "mean error";
  for (int i = 0; i < 20; ++i) EXPECT_EQ(batch.labels[i].item<std::int64_t>(), bytes[20 * 784 + i]) << i;
}

}  // namespace
}  // namespace orchestrate::tfrecord

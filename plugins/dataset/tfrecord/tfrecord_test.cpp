#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "index_entry.h"
#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/image/image_bombs_testing.h"
#include "orchestrate/image/image_transforms.h"
#include "orchestrate/testing/dataset_batches.h"
#include "orchestrate/testing/plugin_under_test.h"
#include "orchestrate/testing/scratch_dir.h"
#include "orchestrate/tf_example/labelled_image.h"
#include "orchestrate/tfrecord/record_framing.h"
#include "tfrecord_testing.h"

namespace orchestrate::tfrecord {
namespace {

using orchestrate::testing::ScratchDir;
using testing::encode_png;
using testing::flip_byte;
using testing::test_image;

// What a dataset reports for its run's events.
class RecordedEvents final : public DataEventSink {
 public:
  void event(const std::string& kind, const std::string& message) override {
    std::lock_guard lock(mutex_);
    events_.push_back(kind + ": " + message);
  }
  std::vector<std::string> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> events_;
};

// What a construction printed to stderr (the plugin's reports), and what it built.
struct Built {
  std::unique_ptr<Dataset> dataset;
  std::string stderr_text;
};

// A data set as TensorFlow's converters lay it out: two train shards of
// three records and one validation shard of two, 28x28 grey PNGs, labels
// 0..3 in order of appearance.
class TfRecordDataset : public ::testing::Test {
 protected:
  void SetUp() override {
    write_shard("train-00000-of-00002", {0, 1, 2});
    write_shard("train-00001-of-00002", {3, 4, 5});
    write_shard("validation-00000-of-00001", {6, 7});
  }

  static std::int64_t label_of(std::int64_t image) { return image % 4; }

  // Records of images `ids`; `make` may replace a record's payload.
  void write_shard(const std::string& name, const std::vector<std::int64_t>& ids,
                   const std::function<std::string(std::int64_t, std::string)>& make = {}) {
    TfRecordWriter writer(data_.file(name));
    offsets_[name].clear();
    for (const auto id : ids) {
      std::string payload = serialize_labelled_image({encode_png(test_image(id)), "png", label_of(id)}, {});
      if (make) payload = make(id, payload);
      offsets_[name].push_back(writer.write(payload));
    }
    writer.close();
  }

  Params params(const std::function<void(Params&)>& customize = {}) const {
    auto& entry = orchestrate::testing::plugin_under_test().datasets().get("tfrecord");
    auto p = default_params(entry.info.schema);
    p.set("dir", data_.path().string());
    p.set("channels", std::int64_t{1});
    p.set("height", std::int64_t{28});
    p.set("width", std::int64_t{28});
    p.set("index_cache_dir", cache_.path().string());
    if (customize) customize(p);
    return p;
  }

  Built build(DatasetSplit split, const std::function<void(Params&)>& customize = {},
              DataEventSink* events = nullptr) const {
    auto& entry = orchestrate::testing::plugin_under_test().datasets().get("tfrecord");
    std::ostringstream captured;
    auto* previous = std::cerr.rdbuf(captured.rdbuf());
    Built built;
    try {
      built.dataset = entry.create(params(customize), DatasetContext{split, events});
    } catch (...) {
      std::cerr.rdbuf(previous);
      throw;
    }
    std::cerr.rdbuf(previous);
    built.stderr_text = captured.str();
    return built;
  }

  // The DataError message of building the train split, or "" if none.
  std::string train_error(const std::function<void(Params&)>& customize = {}) const {
    try {
      build(DatasetSplit::train, customize);
    } catch (const DataError& error) {
      return error.what();
    }
    return "";
  }

  std::string shard(const std::string& name) const { return data_.file(name); }

  ScratchDir data_;
  ScratchDir cache_;
  std::map<std::string, std::vector<std::uint64_t>> offsets_;
};

at::Tensor expected_image(std::int64_t id) { return test_image(id).permute({2, 0, 1}).to(at::kFloat) / 255.0; }

std::vector<std::int64_t> all_indices(const Dataset& dataset) {
  std::vector<std::int64_t> indices(static_cast<std::size_t>(dataset.size()));
  for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<std::int64_t>(i);
  return indices;
}

auto skip = [](Params& p) { p.set("on_corrupt", std::string("skip")); };

TEST_F(TfRecordDataset, ReadsEveryShardInOrderWithExactPixelsAndLabels) {
  const auto train = build(DatasetSplit::train).dataset;
  ASSERT_EQ(train->size(), 6);
  const auto batch = orchestrate::testing::float_batch(*train, {5, 0, 3, 0});
  EXPECT_EQ(batch.images.sizes(), (at::IntArrayRef{4, 1, 28, 28}));
  EXPECT_TRUE(batch.images[0].equal(expected_image(5)));
  EXPECT_TRUE(batch.images[1].equal(expected_image(0)));
  EXPECT_TRUE(batch.images[2].equal(expected_image(3)));
  EXPECT_TRUE(batch.labels.equal(at::tensor(std::vector<std::int64_t>{1, 0, 3, 0})));

  const auto test = build(DatasetSplit::test).dataset;
  ASSERT_EQ(test->size(), 2);
  EXPECT_TRUE(orchestrate::testing::float_batch(*test, {1}).images[0].equal(expected_image(7)));
}

TEST_F(TfRecordDataset, CountsClassesFromTheTrainSplitForBothSplits) {
  EXPECT_EQ(build(DatasetSplit::train).dataset->info().num_classes, 4);
  // The test split's labels are 2 and 3; its class count is still the train split's.
  write_shard("validation-00000-of-00001", {6});
  const auto info = build(DatasetSplit::test).dataset->info();
  EXPECT_EQ(info.num_classes, 4);
  EXPECT_EQ(info.channels, 1);
  EXPECT_EQ(info.height, 28);
}

TEST_F(TfRecordDataset, DeclaredSizeResizesWithTheSharedKernel) {
  const auto train = build(DatasetSplit::train, [](Params& p) {
    p.set("height", std::int64_t{14});
    p.set("width", std::int64_t{20});
    p.set("channels", std::int64_t{3});
  }).dataset;
  const auto images = orchestrate::testing::float_batch(*train, {1}).images;
  EXPECT_EQ(images.sizes(), (at::IntArrayRef{1, 3, 14, 20}));
  // Resized as uint8, as the pixels are stored: the kernel the preprocessing presets use.
  const auto resized = orchestrate::resize_pixels(test_image(1).expand({28, 28, 3}).contiguous(), 14, 20);
  EXPECT_TRUE(images[0].equal(resized.permute({2, 0, 1}).to(at::kFloat).div_(255.0)));
}

TEST_F(TfRecordDataset, TheIndexIsCachedAndRebuiltWhenTheFileChanges) {
  EXPECT_NE(build(DatasetSplit::train).stderr_text.find("indexed 2 train files"), std::string::npos);
  EXPECT_EQ(build(DatasetSplit::train).stderr_text, "");  // both indexes from the cache

  write_shard("train-00001-of-00002", {3, 4});  // another size and time
  const auto again = build(DatasetSplit::train);
  EXPECT_NE(again.stderr_text.find("indexed 1 train file "), std::string::npos) << again.stderr_text;
  EXPECT_EQ(again.dataset->size(), 5);

  // Other rules are another cache entry, not a stale hit.
  const auto offset = build(DatasetSplit::train, [](Params& p) { p.set("num_classes", std::int64_t{10}); });
  EXPECT_NE(offset.stderr_text.find("indexed 2 train files"), std::string::npos) << offset.stderr_text;
}

TEST_F(TfRecordDataset, SameSizeRewriteWithANewTimeIsIndexedAgain) {
  build(DatasetSplit::train);
  // The same bytes, so only the modification time says it changed.
  struct timeval times[2] = {{1, 0}, {1, 0}};
  ASSERT_EQ(utimes(shard("train-00000-of-00002").c_str(), times), 0);
  EXPECT_NE(build(DatasetSplit::train).stderr_text.find("indexed 1 train file "), std::string::npos);
}

TEST_F(TfRecordDataset, ADamagedCacheEntryIsBuiltAgain) {
  build(DatasetSplit::train);
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache_.path())) {
    auto bytes = testing::read_bytes(entry.path().string());
    bytes.resize(bytes.size() - 5);
    testing::write_bytes(entry.path().string(), bytes);
    ++entries;
  }
  EXPECT_EQ(entries, 2);
  const auto again = build(DatasetSplit::train);
  EXPECT_NE(again.stderr_text.find("indexed 2 train files"), std::string::npos) << again.stderr_text;
  EXPECT_NE(again.stderr_text.find("[data] tfrecord: warning: a damaged index cache entry was ignored and its file "
                                   "indexed again: " + cache_.path().string() + "/train-0000"),
            std::string::npos)
      << again.stderr_text;
  EXPECT_NE(again.stderr_text.find(" (and 1 more)\n"), std::string::npos) << again.stderr_text;
  EXPECT_EQ(again.dataset->size(), 6);
}

// Each way a cache entry can be damaged: rebuilt with one warning line naming
// the entry and the cause, and the same records read as from the data.
TEST_F(TfRecordDataset, ATruncatedGarbageOrTamperedCacheEntryIsRebuiltWithAWarning) {
  const auto labels_of = [](const Dataset& dataset) {
    return orchestrate::testing::float_batch(dataset, all_indices(dataset)).labels;
  };
  const auto expected = labels_of(*build(DatasetSplit::train).dataset);
  const std::string name = "train-00000-of-00002";
  std::string entry;
  for (const auto& file : std::filesystem::directory_iterator(cache_.path()))
    if (file.path().filename().string().rfind(name, 0) == 0) entry = file.path().string();
  ASSERT_NE(entry, "");
  const std::string intact = testing::read_bytes(entry);

  // Record 1's number and offset, as the entry stores them (u64, little-endian).
  const auto u64 = [](std::uint64_t value) {
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
    return bytes;
  };
  const std::string record_1 = u64(1) + u64(offsets_[name][1]);
  const auto at = intact.find(record_1);
  ASSERT_NE(at, std::string::npos);
  std::string tampered = intact;
  tampered.replace(at + 8, 8, u64(1u << 30));
  std::string huge_count = intact;
  const auto count_at = intact.find(u64(3) + u64(0) + u64(0));  // 3 records, record 0 at number 0, byte 0
  ASSERT_NE(count_at, std::string::npos);
  huge_count.replace(count_at, 8, u64(std::uint64_t{1} << 60));
  std::string garbage(intact.size(), '\0');
  for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>(i * 131 + 7);

  const std::vector<std::pair<std::string, std::string>> damages{
      {intact.substr(0, intact.size() / 2), "the entry ends at byte " + std::to_string(intact.size() / 2) + " inside its "},
      {garbage, "not an index cache entry (no \"orchestrate-tfrecord-index\" magic at its start)"},
      {tampered, "record 1 of the entry (" },
      {huge_count, "1152921504606846976 records need at least 32 bytes each, "},
  };
  for (const auto& [bytes, cause] : damages) {
    SCOPED_TRACE(cause);
    testing::write_bytes(entry, bytes);
    const auto again = build(DatasetSplit::train);
    EXPECT_EQ(again.stderr_text.find("[data] tfrecord: warning: a damaged index cache entry was ignored and its "
                                     "file indexed again: " + entry + ": " + cause),
              0u)
        << again.stderr_text;
    EXPECT_NE(again.stderr_text.find("indexed 1 train file "), std::string::npos) << again.stderr_text;
    EXPECT_EQ(std::count(again.stderr_text.begin(), again.stderr_text.end(), '\n'), 2) << again.stderr_text;
    EXPECT_TRUE(labels_of(*again.dataset).equal(expected));
    EXPECT_EQ(testing::read_bytes(entry), intact);  // rebuilt
  }
  EXPECT_EQ(build(DatasetSplit::train).stderr_text, "");  // the rebuilt entries are read
}

TEST_F(TfRecordDataset, IndexCacheOffScansEveryTime) {
  auto off = [](Params& p) { p.set("index_cache_dir", std::string("off")); };
  EXPECT_NE(build(DatasetSplit::train, off).stderr_text.find("not cached"), std::string::npos);
  EXPECT_NE(build(DatasetSplit::train, off).stderr_text.find("indexed 2 train files"), std::string::npos);
}

TEST_F(TfRecordDataset, LabelOffsetIsSubtractedAndALabelBelowItIsBad) {
  // ImageNet style: stored labels 1..N, class 0 is "background".
  write_shard("train-00000-of-00002", {0, 1, 2}, [](std::int64_t id, std::string) {
    return serialize_labelled_image({encode_png(test_image(id)), "png", id + 1}, {});
  });
  write_shard("train-00001-of-00002", {3});
  auto offset_one = [](Params& p) { p.set("label_offset", std::int64_t{1}); };
  const auto message = train_error(offset_one);
  // The record of image 3 stores label 3, so it is class 2; image 0 stored 1, now 0: fine. None is bad yet.
  EXPECT_EQ(message, "");
  const auto train = build(DatasetSplit::train, offset_one).dataset;
  EXPECT_TRUE(orchestrate::testing::float_batch(*train, {0, 1, 2, 3}).labels.equal(at::tensor(std::vector<std::int64_t>{0, 1, 2, 2})));

  write_shard("train-00001-of-00002", {4});  // stores label 0: below the offset
  EXPECT_NE(train_error(offset_one).find(shard("train-00001-of-00002") +
                                         ": record 0 at byte 0: label -1 (image/class/label 0 less label_offset 1) is "
                                         "negative"),
            std::string::npos)
      << train_error(offset_one);
}

TEST_F(TfRecordDataset, LabelOutOfRangeFailsOrIsSkipped) {
  auto four_classes = [](Params& p) { p.set("num_classes", std::int64_t{3}); };
  const auto message = train_error(four_classes);
  // Image 3 has label 3, the first record of the second shard.
  EXPECT_EQ(message, "[data] tfrecord: " + shard("train-00001-of-00002") +
                         ": record 0 at byte 0: label 3 (image/class/label 3) is outside [0, 3) (1 bad record of 6 in "
                         "the train split; on_corrupt = \"skip\" leaves bad records out)");
  const auto skipped = build(DatasetSplit::train, [&](Params& p) {
    four_classes(p);
    skip(p);
    p.set("max_corrupt_fraction", 0.5);
  });
  EXPECT_EQ(skipped.dataset->size(), 5);
  EXPECT_NE(skipped.stderr_text.find("skipped 1 bad record of 6 in the train split; the first: " +
                                     shard("train-00001-of-00002") + ": record 0 at byte 0: label 3"),
            std::string::npos)
      << skipped.stderr_text;
  EXPECT_TRUE(orchestrate::testing::float_batch(*skipped.dataset, all_indices(*skipped.dataset))
                  .labels.equal(at::tensor(std::vector<std::int64_t>{0, 1, 2, 0, 1})));
}

// recipes/fashion_mnist_tfrecord.toml names its classes and gives no
// num_classes: a label beyond the names is a bad record, not a loss error.
TEST_F(TfRecordDataset, ClassNamesAloneBoundTheLabels) {
  write_shard("train-00001-of-00002", {3, 4, 5}, [](std::int64_t id, std::string payload) {
    return id == 4 ? serialize_labelled_image({encode_png(test_image(id)), "png", 12}, {}) : payload;
  });
  auto four_names = [](Params& p) { p.set("class_names", std::vector<std::string>{"a", "b", "c", "d"}); };
  const std::string first = shard("train-00001-of-00002") + ": record 1 at byte " +
                            std::to_string(offsets_["train-00001-of-00002"][1]) +
                            ": label 12 (image/class/label 12) is outside [0, 4)";
  EXPECT_EQ(train_error(four_names), "[data] tfrecord: " + first +
                                         " (1 bad record of 6 in the train split; on_corrupt = \"skip\" leaves bad "
                                         "records out)");
  const auto skipped = build(DatasetSplit::train, [&](Params& p) {
    four_names(p);
    skip(p);
    p.set("max_corrupt_fraction", 0.5);
  });
  EXPECT_EQ(skipped.dataset->size(), 5);
  EXPECT_NE(skipped.stderr_text.find("skipped 1 bad record of 6 in the train split; the first: " + first),
            std::string::npos)
      << skipped.stderr_text;
  EXPECT_EQ(orchestrate::testing::float_batch(*skipped.dataset, all_indices(*skipped.dataset)).labels.max().item<std::int64_t>(),
            3);
}

// A decompression bomb in a record (a PNG of a few hundred bytes whose header
// declares 100000 x 100000) is a bad record, refused from its header before
// anything is allocated; max_image_pixels moves the limit (and is part of
// the rules a cached index was built under).
TEST_F(TfRecordDataset, ADecompressionBombIsABadRecordUnderTheLimitItsKeyMoves) {
  write_shard("train-00001-of-00002", {3, 4, 5}, [](std::int64_t id, std::string payload) {
    return id == 4 ? serialize_labelled_image({orchestrate::testing::png_declaring(100000, 100000), "png", 0}, {})
                   : payload;
  });
  const std::string first = shard("train-00001-of-00002") + ": record 1 at byte " +
                            std::to_string(offsets_["train-00001-of-00002"][1]) +
                            ": image/encoded: image of 100000x100000 = 10000000000 pixels exceeds the limit of "
                            "89478485 (a decompression bomb?); raise the dataset's max_image_pixels if it is genuine";
  EXPECT_EQ(train_error(), "[data] tfrecord: " + first +
                               " (1 bad record of 6 in the train split; on_corrupt = \"skip\" leaves bad records out)");
  const auto skipped = build(DatasetSplit::train, [&](Params& p) {
    skip(p);
    p.set("max_corrupt_fraction", 0.5);
  });
  EXPECT_EQ(skipped.dataset->size(), 5);
  EXPECT_NE(skipped.stderr_text.find("skipped 1 bad record of 6 in the train split; the first: " + first),
            std::string::npos)
      << skipped.stderr_text;
  // 28 x 28 = 784 pixels pass at 784, not at 783 (the index cached at 784 is not reused).
  write_shard("train-00001-of-00002", {3, 4, 5});
  const auto at = [](std::int64_t limit) { return [limit](Params& p) { p.set("max_image_pixels", limit); }; };
  EXPECT_EQ(train_error(at(784)), "");
  EXPECT_NE(train_error(at(783)).find("exceeds the limit of 783"), std::string::npos);
}

// Labels that no class count can hold, and label_offset arithmetic that
// would overflow: bad records too, named with the label and the range.
TEST_F(TfRecordDataset, OverflowingLabelsAreBadRecords) {
  const std::int64_t huge = std::int64_t{1} << 40;
  const std::int64_t lowest = std::numeric_limits<std::int64_t>::min();
  write_shard("train-00001-of-00002", {3, 4, 5}, [&](std::int64_t id, std::string payload) {
    if (id == 3) return serialize_labelled_image({encode_png(test_image(id)), "png", huge}, {});
    if (id == 4) return serialize_labelled_image({encode_png(test_image(id)), "png", lowest}, {});
    return payload;
  });
  const std::string file = shard("train-00001-of-00002");
  const auto& offsets = offsets_["train-00001-of-00002"];
  EXPECT_EQ(train_error(), "[data] tfrecord: " + file +
                               ": record 0 at byte 0: label 1099511627776 (image/class/label 1099511627776) is outside "
                               "[0, 16777216), the most classes a data set may have (2 bad records of 6 in the train "
                               "split; on_corrupt = \"skip\" leaves bad records out)");
  auto offset_one = [](Params& p) { p.set("label_offset", std::int64_t{-1}); };
  EXPECT_NE(train_error(offset_one).find(file + ": record 0 at byte 0: label 1099511627777"), std::string::npos);
  auto declared = [](Params& p) {
    p.set("num_classes", std::int64_t{6});
    p.set("label_offset", std::int64_t{1});
  };
  RecordedEvents events;
  const auto skipped = build(DatasetSplit::train, [&](Params& p) {
    declared(p);
    skip(p);
    p.set("max_corrupt_fraction", 0.6);
  }, &events);
  EXPECT_EQ(skipped.dataset->size(), 3);  // images 1, 2 and 5: image 0's label 0 is -1 less the offset
  const auto recorded = events.events();
  ASSERT_EQ(recorded.size(), 4u);
  EXPECT_NE(recorded[0].find("record 0 at byte 0: label -1 (image/class/label 0 less label_offset 1) is negative"),
            std::string::npos)
      << recorded[0];
  EXPECT_NE(recorded[1].find(file + ": record 0 at byte 0: label 1099511627775 (image/class/label 1099511627776 "
                             "less label_offset 1) is outside [0, 6)"),
            std::string::npos)
      << recorded[1];
  EXPECT_NE(recorded[2].find(file + ": record 1 at byte " + std::to_string(offsets[1]) +
                             ": label (image/class/label -9223372036854775808 less label_offset 1) overflows a 64-bit "
                             "integer; a class is in [0, 6)"),
            std::string::npos)
      << recorded[2];
}

// Classes counted from the train split: a test record naming a class beyond
// them is a bad record of the test split.
TEST_F(TfRecordDataset, ATestLabelBeyondTheCountedClassesIsABadRecord) {
  write_shard("validation-00000-of-00001", {6, 7}, [](std::int64_t id, std::string payload) {
    return id == 7 ? serialize_labelled_image({encode_png(test_image(id)), "png", 9}, {}) : payload;
  });
  const std::string message = [&] {
    try {
      build(DatasetSplit::test);
    } catch (const DataError& error) {
      return std::string(error.what());
    }
    return std::string();
  }();
  EXPECT_EQ(message, "[data] tfrecord: " + shard("validation-00000-of-00001") + ": record 1 at byte " +
                         std::to_string(offsets_["validation-00000-of-00001"][1]) +
                         ": label 9 (image/class/label, less any label_offset) is outside [0, 4), the classes counted "
                         "from the train split's labels; set num_classes or class_names to declare more (1 bad record "
                         "of 2 in the test split; on_corrupt = \"skip\" leaves bad records out)");
  const auto skipped = build(DatasetSplit::test, [](Params& p) {
    p.set("on_corrupt", std::string("skip"));
    p.set("max_corrupt_fraction", 0.5);
  });
  EXPECT_EQ(skipped.dataset->size(), 1);
  EXPECT_EQ(skipped.dataset->info().num_classes, 4);
}

TEST_F(TfRecordDataset, TooManyBadRecordsFailEvenWhenSkipping) {
  const auto message = train_error([](Params& p) {
    p.set("num_classes", std::int64_t{3});
    p.set("on_corrupt", std::string("skip"));
  });  // 1 of 6 > the default 1 %
  EXPECT_NE(message.find("1 bad record of 6 in the train split (16.67 % of them, more than max_corrupt_fraction = "
                         "0.01); the first: "),
            std::string::npos)
      << message;
}

TEST_F(TfRecordDataset, FlippedPayloadByteIsABadDataCrc) {
  const auto& offsets = offsets_["train-00000-of-00002"];
  flip_byte(shard("train-00000-of-00002"), offsets[1] + kRecordHeaderBytes + 10);
  const auto message = train_error();
  EXPECT_NE(message.find(shard("train-00000-of-00002") + ": record 1 at byte " + std::to_string(offsets[1]) +
                         ": bad data CRC (stored 0x"),
            std::string::npos)
      << message;
  const auto skipped = build(DatasetSplit::train, [](Params& p) {
    p.set("on_corrupt", std::string("skip"));
    p.set("max_corrupt_fraction", 0.2);
  });
  ASSERT_EQ(skipped.dataset->size(), 5);  // records after it are still read
  EXPECT_TRUE(orchestrate::testing::float_batch(*skipped.dataset, {1}).images[0].equal(expected_image(2)));
}

TEST_F(TfRecordDataset, FlippedLengthByteLosesOnlyTheDamagedRecord) {
  const auto& offsets = offsets_["train-00000-of-00002"];
  flip_byte(shard("train-00000-of-00002"), offsets[1] + 2);
  EXPECT_NE(train_error().find("record 1 at byte " + std::to_string(offsets[1]) + ": bad length CRC"),
            std::string::npos)
      << train_error();
  RecordedEvents events;
  const auto skipped = build(DatasetSplit::train, [](Params& p) {
    p.set("on_corrupt", std::string("skip"));
    p.set("max_corrupt_fraction", 0.5);
  }, &events);
  ASSERT_EQ(skipped.dataset->size(), 5);  // the records after the damage are read
  const auto batch = orchestrate::testing::float_batch(*skipped.dataset, {0, 1, 2});
  EXPECT_TRUE(batch.images[1].equal(expected_image(2)));
  EXPECT_TRUE(batch.images[2].equal(expected_image(3)));
  const std::uint64_t lost = offsets[2] - offsets[1];
  const std::uint64_t bytes = std::filesystem::file_size(shard("train-00000-of-00002")) +
                              std::filesystem::file_size(shard("train-00001-of-00002"));
  const auto recorded = events.events();
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_NE(recorded[0].find(": lost " + std::to_string(lost) +
                             " bytes (at least 1 record) before the next intact record, at byte " +
                             std::to_string(offsets[2])),
            std::string::npos)
      << recorded[0];
  EXPECT_NE(recorded[1].find("skipped 1 bad record of 6 in the train split (" + std::to_string(lost) + " of its " +
                             std::to_string(bytes) + " bytes in damaged regions); the first: " + shard("train-00000-of-00002") +
                             ": record 1 at byte " + std::to_string(offsets[1]) + ": bad length CRC"),
            std::string::npos)
      << recorded[1];
}

// A damaged region hides an unknowable number of records and counts as one,
// but its bytes are exact: max_corrupt_fraction trips on them.
TEST_F(TfRecordDataset, ADamagedRegionOfManyRecordsTripsMaxCorruptFractionByItsBytes) {
  std::vector<std::int64_t> ids(20);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i);
  write_shard("train-00000-of-00002", ids);
  const auto& offsets = offsets_["train-00000-of-00002"];
  const std::string path = shard("train-00000-of-00002");
  auto bytes = testing::read_bytes(path);
  std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(offsets[1]),
            bytes.begin() + static_cast<std::ptrdiff_t>(offsets[16]), '\xff');  // records 1..15 overwritten
  testing::write_bytes(path, bytes);
  const std::uint64_t lost = offsets[16] - offsets[1];
  const std::uint64_t total = bytes.size() + std::filesystem::file_size(shard("train-00001-of-00002"));

  const auto message = train_error([](Params& p) {
    p.set("on_corrupt", std::string("skip"));
    p.set("max_corrupt_fraction", 0.5);  // 1 bad record of 9 is within it; the bytes are not
  });
  char share[32];
  std::snprintf(share, sizeof share, "%.4g", 100.0 * static_cast<double>(lost) / static_cast<double>(total));
  EXPECT_EQ(message, "[data] tfrecord: " + std::to_string(lost) + " of the " + std::to_string(total) +
                         " bytes of the train split are in damaged regions, whose records cannot be counted (" + share +
                         " % of them, more than max_corrupt_fraction = 0.5); the first: " + path + ": record 1 at byte " +
                         std::to_string(offsets[1]) + ": bad length CRC (stored 0xffffffff, computed 0x" +
                         message.substr(message.find("computed 0x") + 11, 8) + "): lost " + std::to_string(lost) +
                         " bytes (at least 1 record) before the next intact record, at byte " +
                         std::to_string(offsets[16]));
  const auto skipped = build(DatasetSplit::train, [](Params& p) {
    p.set("on_corrupt", std::string("skip"));
    p.set("max_corrupt_fraction", 0.9);
  });
  ASSERT_EQ(skipped.dataset->size(), 1 + 4 + 3);  // record 0, records 16..19, the second shard
  EXPECT_TRUE(orchestrate::testing::float_batch(*skipped.dataset, {1}).images[0].equal(expected_image(16)));
}

TEST_F(TfRecordDataset, TruncatedFileKeepsTheRecordsBeforeTheCut) {
  const auto& offsets = offsets_["train-00001-of-00002"];
  testing::truncate_to(shard("train-00001-of-00002"), offsets[2] + 30);
  EXPECT_NE(train_error().find(shard("train-00001-of-00002") + ": record 2 at byte " + std::to_string(offsets[2]) +
                               ": truncated: the file ends 18 bytes into the record's"),
            std::string::npos)
      << train_error();
  EXPECT_EQ(build(DatasetSplit::train, [](Params& p) {
              p.set("on_corrupt", std::string("skip"));
              p.set("max_corrupt_fraction", 0.5);
            }).dataset->size(), 5);
}

TEST_F(TfRecordDataset, ZeroByteUndecodableAndRawImagesAreBadRecords) {
  write_shard("train-00001-of-00002", {3, 4, 5}, [](std::int64_t id, std::string payload) {
    if (id == 3) return serialize_labelled_image({"", "png", 3}, {});
    if (id == 4) return serialize_labelled_image({"not an image at all", "", 0}, {});
    if (id == 5) return serialize_labelled_image({std::string(784, '\0'), "raw", 1}, {});
    return payload;
  });
  const auto message = train_error();
  EXPECT_NE(message.find("record 0 at byte 0: zero-byte image in feature 'image/encoded' (3 bad records of 6"),
            std::string::npos)
      << message;
  const auto skipped = build(DatasetSplit::train, [](Params& p) {
    p.set("on_corrupt", std::string("skip"));
    p.set("max_corrupt_fraction", 0.5);
  });
  EXPECT_EQ(skipped.dataset->size(), 3);
  EXPECT_NE(skipped.stderr_text.find("skipped 3 bad records of 6"), std::string::npos) << skipped.stderr_text;
  // The causes of the other two, each named:
  write_shard("train-00001-of-00002", {4}, [](std::int64_t, std::string) {
    return serialize_labelled_image({"not an image at all", "", 0}, {});
  });
  EXPECT_NE(train_error().find("record 0 at byte 0: image/encoded: neither a JPEG nor a PNG file"), std::string::npos)
      << train_error();
  write_shard("train-00001-of-00002", {5}, [](std::int64_t, std::string) {
    return serialize_labelled_image({std::string(784, '\0'), "raw", 1}, {});
  });
  EXPECT_NE(train_error().find("unsupported image/format 'raw' (JPEG and PNG are decoded)"), std::string::npos)
      << train_error();
}

TEST_F(TfRecordDataset, WithoutImageVerificationABadImageFailsWhenRead) {
  write_shard("train-00001-of-00002", {3}, [](std::int64_t, std::string) {
    const std::string png = encode_png(test_image(3));
    return serialize_labelled_image({png.substr(0, png.size() / 2), "png", 3}, {});  // cut short
  });
  auto trusting = [](Params& p) { p.set("verify_images", false); };
  EXPECT_EQ(train_error(trusting), "");
  const auto train = build(DatasetSplit::train, trusting).dataset;
  EXPECT_NO_THROW(orchestrate::testing::float_batch(*train, {0, 1, 2}));
  try {
    orchestrate::testing::float_batch(*train, {3});
    FAIL() << "expected a DataError";
  } catch (const DataError& error) {
    EXPECT_NE(std::string(error.what()).find(shard("train-00001-of-00002") + ": record 0 at byte 0: image/encoded: "),
              std::string::npos)
        << error.what();
  }
  EXPECT_NE(train_error().find("record 0 at byte 0: image/encoded: corrupt PNG"), std::string::npos) << train_error();
}

TEST_F(TfRecordDataset, SkippedRecordsAreReportedAsEventsEachAndASummary) {
  const auto& offsets = offsets_["train-00000-of-00002"];
  flip_byte(shard("train-00000-of-00002"), offsets[1] + kRecordHeaderBytes + 10);
  testing::truncate_to(shard("train-00001-of-00002"), offsets_["train-00001-of-00002"][2] + 30);
  RecordedEvents events;
  const auto skipped = build(DatasetSplit::train, [](Params& p) {
    p.set("on_corrupt", std::string("skip"));
    p.set("max_corrupt_fraction", 0.5);
  }, &events);
  EXPECT_EQ(skipped.dataset->size(), 4);
  const auto recorded = events.events();
  ASSERT_EQ(recorded.size(), 3u);
  EXPECT_EQ(recorded[0].rfind("bad_data: [data] tfrecord: train split: skipped " + shard("train-00000-of-00002") +
                                  ": record 1 at byte " + std::to_string(offsets[1]) + ": bad data CRC",
                              0),
            0u)
      << recorded[0];
  EXPECT_EQ(recorded[1].rfind("bad_data: [data] tfrecord: train split: skipped " + shard("train-00001-of-00002") +
                                  ": record 2 at byte ",
                              0),
            0u)
      << recorded[1];
  EXPECT_EQ(recorded[2].rfind("bad_data: [data] tfrecord: skipped 2 bad records of 6 in the train split; the first: ", 0),
            0u)
      << recorded[2];
}

TEST_F(TfRecordDataset, WithSkipABadImageFoundWhenReadIsReplacedByTheNextRecordAndReportedOnce) {
  write_shard("train-00001-of-00002", {3, 4, 5}, [](std::int64_t id, std::string payload) {
    if (id != 3) return payload;
    const std::string png = encode_png(test_image(3));
    return serialize_labelled_image({png.substr(0, png.size() / 2), "png", 3}, {});  // cut short
  });
  RecordedEvents events;
  const auto train = build(DatasetSplit::train, [](Params& p) {
    p.set("verify_images", false);
    p.set("on_corrupt", std::string("skip"));
    p.set("max_corrupt_fraction", 0.5);
  }, &events).dataset;
  ASSERT_EQ(train->size(), 6);
  for (int pass = 0; pass < 2; ++pass) {  // the second time: replaced again, not reported again
    const auto batch = orchestrate::testing::float_batch(*train, {3, 5});
    EXPECT_TRUE(batch.images[0].equal(expected_image(4)));  // index 3 (image 3) replaced by index 4
    EXPECT_EQ(batch.labels[0].item<std::int64_t>(), label_of(4));
  }
  const auto recorded = events.events();
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_NE(recorded[0].find("train split: skipped " + shard("train-00001-of-00002") +
                             ": record 0 at byte 0: image/encoded: "),
            std::string::npos)
      << recorded[0];
  EXPECT_NE(recorded[0].find("(found when read in epoch 1; example 3 replaced by the next one that reads)"),
            std::string::npos)
      << recorded[0];
}

TEST_F(TfRecordDataset, TellsHowManyRecordsEachFileHoldsForShardingByFile) {
  write_shard("train-00001-of-00002", {3, 4, 5, 6});
  EXPECT_EQ(build(DatasetSplit::train).dataset->examples_per_file(), (std::vector<std::int64_t>{3, 4}));
  // limit keeps the first records: the second file then holds one.
  EXPECT_EQ(build(DatasetSplit::train, [](Params& p) { p.set("limit", std::int64_t{4}); }).dataset->examples_per_file(),
            (std::vector<std::int64_t>{3, 1}));
}

TEST_F(TfRecordDataset, AFileDamagedAfterIndexingFailsTheBatchNamingTheRecord) {
  const auto train = build(DatasetSplit::train).dataset;
  const auto& offsets = offsets_["train-00000-of-00002"];
  flip_byte(shard("train-00000-of-00002"), offsets[2] + kRecordHeaderBytes + 3);
  EXPECT_NO_THROW(orchestrate::testing::float_batch(*train, {0, 1, 3}));
  try {
    orchestrate::testing::float_batch(*train, {0, 2});
    FAIL() << "expected a DataError";
  } catch (const DataError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("[data] tfrecord: " + shard("train-00000-of-00002") + ": record 2 at byte " +
                                                  std::to_string(offsets[2]) + ": bad data CRC",
                                              0),
              0u)
        << error.what();
  }
}

TEST_F(TfRecordDataset, FilesByListAndGlobUnderDirOrAbsolute) {
  const auto listed = build(DatasetSplit::train, [&](Params& p) {
    p.set("train_files", std::vector<std::string>{"train-00001-*", shard("train-00000-of-00002")});
  }).dataset;
  ASSERT_EQ(listed->size(), 6);
  EXPECT_TRUE(orchestrate::testing::float_batch(*listed, {0}).images[0].equal(expected_image(3)));  // in the order given
  const auto message = train_error([](Params& p) { p.set("train_files", std::vector<std::string>{"train-0009*"}); });
  EXPECT_NE(message.find("no file matches " + data_.file("train-0009*")), std::string::npos) << message;
  EXPECT_NE(train_error([](Params& p) { p.set("train_pattern", std::string("training-*")); }).find("no file matches"),
            std::string::npos);
}

TEST_F(TfRecordDataset, LimitClassNamesAndConcurrentBatches) {
  const auto train = build(DatasetSplit::train, [](Params& p) {
    p.set("limit", std::int64_t{4});
    p.set("class_names", std::vector<std::string>{"a", "b", "c", "d"});
  }).dataset;
  EXPECT_EQ(train->size(), 4);
  EXPECT_EQ(train->info().class_names, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_THROW(orchestrate::testing::float_batch(*train, {4}), std::out_of_range);
  const std::vector<std::int64_t> indices{3, 2, 1, 0, 1, 2};
  const auto expected = orchestrate::testing::float_batch(*train, indices);
  std::vector<Batch> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) threads.emplace_back([&] { result = orchestrate::testing::float_batch(*train, indices); });
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_TRUE(result.images.equal(expected.images));
}

// The cache entry codec on its own (what the index cache fuzz target calls).
TEST(IndexEntry, ReadsBackWhatItWroteAndTellsStaleFromDamaged) {
  const IndexEntryKey key{"/data/train-0", "rules", {1000, 42}};
  FileIndex index;
  index.records = {{0, 0, 84, 3}, {2, 200, 100, 1}};
  index.bad = {{1, 100, 100, "bad data CRC (stored 0x00000000, computed 0x12345678)"}};
  const std::string bytes = encode_index_entry(key, index);
  const auto back = decode_index_entry(bytes, key);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->records.size(), 2u);
  EXPECT_EQ(back->records[1].offset, 200u);
  EXPECT_EQ(back->records[1].label, 1);
  EXPECT_EQ(back->bad[0].region_bytes, 100u);
  EXPECT_EQ(back->bad[0].cause, index.bad[0].cause);
  EXPECT_EQ(back->file_bytes, 1000u);

  // The file changed since (another size): stale, not damaged.
  EXPECT_FALSE(decode_index_entry(bytes, {key.path, key.rules, {1001, 42}}).has_value());

  const auto cause_of = [&](const std::string& damaged, const IndexEntryKey& against) -> std::string {
    try {
      decode_index_entry(damaged, against);
    } catch (const DataError& error) {
      return error.what();
    }
    return "";
  };
  EXPECT_EQ(cause_of(bytes + "x", key), "1 bytes follow the last bad record, at byte " + std::to_string(bytes.size()));
  EXPECT_EQ(cause_of("", key), "not an index cache entry (no \"orchestrate-tfrecord-index\" magic at its start)");
  std::string version = bytes;
  version[8 + 27] = 9;
  EXPECT_EQ(cause_of(version, key), "format version 9, where this orchestrate writes 2");
  // Records that overlap, or run past the data file's end.
  FileIndex overlapping = index;
  overlapping.records[1].offset = 50;
  EXPECT_EQ(cause_of(encode_index_entry(key, overlapping), key),
            "record 1 of the entry (100 bytes at byte 50) is not within the data file's 1000 bytes after the record "
            "before it");
  FileIndex past_the_end = index;
  past_the_end.records[1].data_bytes = 800;
  EXPECT_NE(cause_of(encode_index_entry(key, past_the_end), key).find("(800 bytes at byte 200) is not within"),
            std::string::npos);
  FileIndex multi_line = index;
  multi_line.bad[0].cause = "one\ntwo";
  EXPECT_EQ(cause_of(encode_index_entry(key, multi_line), key),
            "bad record 0 of the entry has a cause of 7 bytes that is not one line of at most 4096");
  // A count no entry of this size can hold is refused before anything is allocated.
  FileIndex many = index;
  many.records.clear();
  std::string huge = encode_index_entry(key, many);
  // The record count, before the bad record count and the bad record's three numbers and cause.
  const auto count_at = huge.size() - index.bad[0].cause.size() - 6 * 8;
  ASSERT_EQ(huge.substr(count_at, 8), std::string(8, '\0'));
  huge.replace(count_at, 8, std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8));
  EXPECT_EQ(cause_of(huge, key).find("9223372036854775807 records need at least 32 bytes each, "), 0u)
      << cause_of(huge, key);
}

TEST(TfRecordSchema, RulesNameWhatIsMissingOrInconsistent) {
  const auto& schema = orchestrate::testing::plugin_under_test().datasets().get("tfrecord").info.schema;
  auto p = default_params(schema);
  EXPECT_EQ(schema.broken_rules(p), (std::vector<std::string>{"dir or train_files: say where the TFRecord files are"}));
  // A dir that is not there is the host's check, as for every dataset.
  const orchestrate::ParamSpec& dir = *schema.find("dir");
  EXPECT_EQ(dir.must_exist, orchestrate::PathCheck::existing_directory);
  EXPECT_EQ(dir.path_problem(std::string("/nowhere/imagenet")), "\"/nowhere/imagenet\" is not a directory (nothing is there)");
  p.set("dir", std::filesystem::temp_directory_path().string());
  EXPECT_TRUE(schema.broken_rules(p).empty());
  p.set("channels", std::int64_t{2});
  EXPECT_EQ(schema.broken_rules(p), (std::vector<std::string>{"channels: 1 (grey) or 3 (RGB)"}));
  p.set("channels", std::int64_t{3});
  p.set("num_classes", std::int64_t{3});
  p.set("class_names", std::vector<std::string>{"a", "b"});
  EXPECT_EQ(schema.broken_rules(p), (std::vector<std::string>{"class_names: 2 names for num_classes = 3"}));
}

}  // namespace
}  // namespace orchestrate::tfrecord

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/testing/dataset_batches.h"
#include "orchestrate/testing/plugin_under_test.h"
#include "orchestrate/testing/scratch_dir.h"

namespace {

using orchestrate::DatasetSplit;
using orchestrate::Params;

constexpr const char* kDebian = "/usr/share/datasets/fashion-mnist/";

Params idx_params(const std::function<void(Params&)>& customize = {}) {
  const auto& entry = orchestrate::testing::plugin_under_test().datasets().get("idx");
  auto p = orchestrate::default_params(entry.info.schema);
  p.set("train_images", std::string(kDebian) + "train-images-idx3-ubyte.gz");
  p.set("train_labels", std::string(kDebian) + "train-labels-idx1-ubyte.gz");
  p.set("test_images", std::string(kDebian) + "t10k-images-idx3-ubyte.gz");
  p.set("test_labels", std::string(kDebian) + "t10k-labels-idx1-ubyte.gz");
  if (customize) customize(p);
  return p;
}

std::unique_ptr<orchestrate::Dataset> make(DatasetSplit split, const std::function<void(Params&)>& customize = {}) {
  return orchestrate::testing::plugin_under_test().datasets().get("idx").create(idx_params(customize), split);
}

std::string error_of(DatasetSplit split, const std::function<void(Params&)>& customize) {
  try {
    make(split, customize);
  } catch (const orchestrate::DataError& error) {
    return error.what();
  }
  return "";
}

// The whole decompressed file, read with zlib directly: an independent reading of the same bytes.
std::string gunzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  std::string out;
  char buffer[1 << 16];
  for (int got; (got = gzread(file, buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<std::size_t>(got));
  gzclose(file);
  return out;
}

void write_raw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(IdxDataset, DebiansFashionMnistGivesTheFilesPixelsAndLabels) {
  const auto images = gunzip(std::string(kDebian) + "t10k-images-idx3-ubyte.gz");
  const auto labels = gunzip(std::string(kDebian) + "t10k-labels-idx1-ubyte.gz");
  const auto test = make(DatasetSplit::test);
  ASSERT_EQ(test->size(), 10000);
  const auto info = test->info();
  EXPECT_EQ(info.channels, 1);
  EXPECT_EQ(info.height, 28);
  EXPECT_EQ(info.width, 28);
  EXPECT_EQ(info.num_classes, 10);  // the train split's largest label plus one
  EXPECT_TRUE(info.class_names.empty());
  const std::vector<std::int64_t> indices{9999, 0, 1234};
  const auto batch = orchestrate::testing::float_batch(*test, indices);
  const auto pixels = (batch.images * 255).round().to(at::kByte).contiguous();
  for (std::size_t i = 0; i < indices.size(); ++i) {
    EXPECT_EQ(std::string(static_cast<const char*>(pixels[i].data_ptr()), 784),
              images.substr(16 + static_cast<std::size_t>(indices[i]) * 784, 784));
    EXPECT_EQ(batch.labels[i].item<std::int64_t>(), labels[8 + static_cast<std::size_t>(indices[i])]);
  }
  EXPECT_EQ(make(DatasetSplit::train)->size(), 60000);
}

TEST(IdxDataset, UncompressedFilesClassNamesAndLimit) {
  orchestrate::testing::ScratchDir dir;
  write_raw(dir.file("images"), gunzip(std::string(kDebian) + "t10k-images-idx3-ubyte.gz"));
  write_raw(dir.file("labels"), gunzip(std::string(kDebian) + "t10k-labels-idx1-ubyte.gz"));
  const std::vector<std::string> names{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
  const auto test = make(DatasetSplit::test, [&](Params& p) {
    p.set("test_images", dir.file("images"));
    p.set("test_labels", dir.file("labels"));
    p.set("class_names", names);
    p.set("limit", std::int64_t{5});
  });
  ASSERT_EQ(test->size(), 5);
  EXPECT_EQ(test->info().class_names, names);
  EXPECT_TRUE(orchestrate::testing::float_batch(*test, {0, 1, 2, 3, 4}).labels.equal(at::tensor(std::vector<std::int64_t>{9, 2, 1, 1, 6})));
  EXPECT_THROW(orchestrate::testing::float_batch(*test, {5}), std::out_of_range);
}

TEST(IdxDataset, LabelsOutsideTheNamedClassesMismatchedFilesAndMissingOnesAreOneLineErrors) {
  const std::string labels = std::string(kDebian) + "train-labels-idx1-ubyte.gz";
  EXPECT_EQ(error_of(DatasetSplit::train, [](Params& p) { p.set("class_names", std::vector<std::string>{"a", "b"}); }),
            "[data] idx: " + labels +
                ": label 9 of example 0 is outside 0..1 (class_names names 2 classes); name every class, or check the "
                "file");
  EXPECT_EQ(error_of(DatasetSplit::test, [&](Params& p) { p.set("test_labels", labels); }),
            "[data] idx: " + std::string(kDebian) + "t10k-images-idx3-ubyte.gz holds 10000 images but " + labels +
                " holds 60000 labels; both files must come from the same split");
  EXPECT_EQ(error_of(DatasetSplit::test, [](Params& p) { p.set("test_images", std::string("/nowhere/images.gz")); }),
            "[data] idx: /nowhere/images.gz: file not found; set [data] test_images to the path of the IDX file");
  EXPECT_EQ(error_of(DatasetSplit::test, [&](Params& p) { p.set("test_images", labels); }),
            "[data] idx: " + labels +
                ": magic number is 2049, expected 2051 for an IDX image file; the file is not what its name says, or "
                "is corrupt");
}

TEST(IdxSchema, AllFourPathsAreNeeded) {
  const auto& schema = orchestrate::testing::plugin_under_test().datasets().get("idx").info.schema;
  auto p = orchestrate::default_params(schema);
  EXPECT_EQ(schema.broken_rules(p), (std::vector<std::string>{"train_images: set the path of the IDX file"}));
  EXPECT_TRUE(schema.broken_rules(idx_params()).empty());
}

}  // namespace

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/plugin.h"
#include "orchestrate/testing/dataset_batches.h"
#include "orchestrate/testing/plugin_under_test.h"
#include "orchestrate/testing/scratch_dir.h"


namespace {

using orchestrate::DatasetSplit;

constexpr std::int64_t kPixelsPerImage = 28 * 28;

std::unique_ptr<orchestrate::Dataset> make_fashion_mnist(DatasetSplit split, const std::string& dir,
                                                         std::int64_t limit = 0) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.datasets().get("fashion_mnist");
  auto params = orchestrate::default_params(entry.info.schema);
  params.set("dir", dir);
  params.set("limit", limit);
  return entry.create(params, split);
}

void append_big_endian(std::vector<std::uint8_t>& bytes, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<std::uint8_t>(value >> shift));
}

void write_gzip(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

// Pixel p of image i, so every value in the file is predictable.
std::uint8_t pixel_value(std::int64_t image, std::int64_t pixel) {
  return static_cast<std::uint8_t>((image * 37 + pixel * 3) % 256);
}

std::vector<std::uint8_t> image_file_bytes(std::uint32_t count, std::uint32_t magic = 2051, std::uint32_t rows = 28,
                                           std::uint32_t columns = 28) {
  std::vector<std::uint8_t> bytes;
  append_big_endian(bytes, magic);
  append_big_endian(bytes, count);
  append_big_endian(bytes, rows);
  append_big_endian(bytes, columns);
  for (std::int64_t image = 0; image < count; ++image)
    for (std::int64_t pixel = 0; pixel < std::int64_t{rows} * columns; ++pixel)
      bytes.push_back(pixel_value(image, pixel));
  return bytes;
}

std::vector<std::uint8_t> label_file_bytes(const std::vector<std::uint8_t>& labels, std::uint32_t magic = 2049) {
  std::vector<std::uint8_t> bytes;
  append_big_endian(bytes, magic);
  append_big_endian(bytes, static_cast<std::uint32_t>(labels.size()));
  bytes.insert(bytes.end(), labels.begin(), labels.end());
  return bytes;
}

class FashionMnistFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    write_gzip(dir_.file("train-images-idx3-ubyte.gz"), image_file_bytes(3));
    write_gzip(dir_.file("train-labels-idx1-ubyte.gz"), label_file_bytes({9, 0, 4}));
    write_gzip(dir_.file("t10k-images-idx3-ubyte.gz"), image_file_bytes(2));
    write_gzip(dir_.file("t10k-labels-idx1-ubyte.gz"), label_file_bytes({1, 8}));
  }

  // The DataError message from building the train split, or "" if none.
  std::string train_error() {
    try {
      make_fashion_mnist(DatasetSplit::train, dir_.path().string());
    } catch (const orchestrate::DataError& error) {
      return error.what();
    }
    return "";
  }

  orchestrate::testing::ScratchDir dir_;
};

at::Tensor expected_image(std::int64_t image) {
  auto pixels = at::empty({kPixelsPerImage}, at::kByte);
  for (std::int64_t p = 0; p < kPixelsPerImage; ++p) pixels[p] = pixel_value(image, p);
  return pixels.reshape({1, 28, 28}).to(at::kFloat) / 255.0;
}

TEST_F(FashionMnistFiles, ReturnsExactPixelsAndLabelsInRequestedOrder) {
  auto train = make_fashion_mnist(DatasetSplit::train, dir_.path().string());
  ASSERT_EQ(train->size(), 3);
  const auto batch = orchestrate::testing::float_batch(*train, {2, 0, 2});
  EXPECT_EQ(batch.images.sizes(), (std::vector<std::int64_t>{3, 1, 28, 28}));
  EXPECT_EQ(batch.images.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(batch.images[0], expected_image(2), 0, 1e-7));
  EXPECT_TRUE(at::allclose(batch.images[1], expected_image(0), 0, 1e-7));
  EXPECT_FLOAT_EQ(batch.images[0][0][0][1].item<float>(), ((2 * 37 + 3) % 256) / 255.0f);
  EXPECT_TRUE(batch.labels.equal(at::tensor(std::vector<std::int64_t>{4, 9, 4})));

  auto test = make_fashion_mnist(DatasetSplit::test, dir_.path().string());
  ASSERT_EQ(test->size(), 2);
  EXPECT_TRUE(orchestrate::testing::float_batch(*test, {1}).labels.equal(at::tensor(std::vector<std::int64_t>{8})));
}

TEST_F(FashionMnistFiles, InfoDescribesGreyImagesAndNamesClasses) {
  const auto info = make_fashion_mnist(DatasetSplit::test, dir_.path().string())->info();
  EXPECT_EQ(info.channels, 1);
  EXPECT_EQ(info.height, 28);
  EXPECT_EQ(info.width, 28);
  EXPECT_EQ(info.num_classes, 10);
  ASSERT_EQ(info.class_names.size(), 10u);
  EXPECT_EQ(info.class_names[0], "T-shirt/top");
  EXPECT_EQ(info.class_names[9], "Ankle boot");
}

TEST_F(FashionMnistFiles, LimitKeepsTheFirstExamples) {
  auto train = make_fashion_mnist(DatasetSplit::train, dir_.path().string(), 2);
  ASSERT_EQ(train->size(), 2);
  const auto batch = orchestrate::testing::float_batch(*train, {0, 1});
  EXPECT_TRUE(at::allclose(batch.images[1], expected_image(1), 0, 1e-7));
  EXPECT_TRUE(batch.labels.equal(at::tensor(std::vector<std::int64_t>{9, 0})));
  EXPECT_THROW(orchestrate::testing::float_batch(*train, {2}), std::out_of_range);
}

TEST_F(FashionMnistFiles, WrongMagicNumberNamesFileAndExpectedMagic) {
  write_gzip(dir_.file("train-images-idx3-ubyte.gz"), image_file_bytes(3, 2049));
  const auto message = train_error();
  EXPECT_NE(message.find("train-images-idx3-ubyte.gz"), std::string::npos) << message;
  EXPECT_NE(message.find("magic number is 2049, expected 2051"), std::string::npos) << message;
}

TEST_F(FashionMnistFiles, FewerRecordsThanHeaderDeclaresIsTruncated) {
  auto bytes = image_file_bytes(3);
  bytes.resize(bytes.size() - kPixelsPerImage / 2);
  write_gzip(dir_.file("train-images-idx3-ubyte.gz"), bytes);
  const auto message = train_error();
  EXPECT_NE(message.find("train-images-idx3-ubyte.gz: truncated: expected 2352 bytes of pixels, found 1960"),
            std::string::npos)
      << message;
}

TEST_F(FashionMnistFiles, CutCompressedStreamIsReported) {
  const auto path = dir_.file("train-labels-idx1-ubyte.gz");
  write_gzip(path, label_file_bytes(std::vector<std::uint8_t>(5000, 3)));
  struct stat file_status {};
  ASSERT_EQ(stat(path.c_str(), &file_status), 0);
  ASSERT_EQ(truncate(path.c_str(), file_status.st_size / 2), 0);
  const auto message = train_error();
  EXPECT_NE(message.find("train-labels-idx1-ubyte.gz"), std::string::npos) << message;
  EXPECT_TRUE(message.find("truncated") != std::string::npos || message.find("corrupt") != std::string::npos)
      << message;
}

TEST_F(FashionMnistFiles, MissingFileSaysHowToInstallOrConfigure) {
  ASSERT_EQ(unlink(dir_.file("t10k-labels-idx1-ubyte.gz").c_str()), 0);
  try {
    make_fashion_mnist(DatasetSplit::test, dir_.path().string());
    FAIL() << "expected a DataError";
  } catch (const orchestrate::DataError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(dir_.file("t10k-labels-idx1-ubyte.gz")), std::string::npos) << message;
    EXPECT_NE(message.find("dataset-fashion-mnist"), std::string::npos) << message;
    EXPECT_NE(message.find("[data] dir"), std::string::npos) << message;
  }
  EXPECT_NO_THROW(make_fashion_mnist(DatasetSplit::train, dir_.path().string()));  // other split unaffected
}

TEST_F(FashionMnistFiles, ImageAndLabelCountsMustAgree) {
  write_gzip(dir_.file("train-labels-idx1-ubyte.gz"), label_file_bytes({9, 0}));
  const auto message = train_error();
  EXPECT_NE(message.find("holds 3 images but"), std::string::npos) << message;
  EXPECT_NE(message.find("holds 2 labels"), std::string::npos) << message;
}

TEST_F(FashionMnistFiles, OtherImageSizeIsRejected) {
  write_gzip(dir_.file("train-images-idx3-ubyte.gz"), image_file_bytes(3, 2051, 32, 28));
  EXPECT_NE(train_error().find("holds 32x28 images"), std::string::npos) << train_error();
}

TEST_F(FashionMnistFiles, LabelOutsideTenClassesIsRejected) {
  write_gzip(dir_.file("train-labels-idx1-ubyte.gz"), label_file_bytes({9, 10, 4}));
  EXPECT_NE(train_error().find("label 10 of example 1 is outside 0..9"), std::string::npos) << train_error();
}

TEST_F(FashionMnistFiles, TrailingDataIsRejected) {
  auto bytes = label_file_bytes({9, 0, 4});
  bytes.push_back(1);
  write_gzip(dir_.file("train-labels-idx1-ubyte.gz"), bytes);
  EXPECT_NE(train_error().find("has data after the 3 records"), std::string::npos) << train_error();
}

// The files Debian's dataset-fashion-mnist installs (a dependency in scripts/setup).
TEST(FashionMnistDebianFiles, HaveTheKnownSizesAndBalancedLabels) {
  auto train = make_fashion_mnist(DatasetSplit::train, "/usr/share/datasets/fashion-mnist");
  auto test = make_fashion_mnist(DatasetSplit::test, "/usr/share/datasets/fashion-mnist");
  ASSERT_EQ(train->size(), 60000);
  ASSERT_EQ(test->size(), 10000);

  std::vector<std::int64_t> all_test(10000);
  for (std::int64_t i = 0; i < 10000; ++i) all_test[i] = i;
  const auto test_batch = orchestrate::testing::float_batch(*test, all_test);
  EXPECT_TRUE(test_batch.labels.bincount().equal(at::full({10}, 1000, at::kLong)));
  EXPECT_EQ(orchestrate::testing::float_batch(*train, {0}).labels.item<std::int64_t>(), 9);  // an ankle boot
  // Published per-pixel statistics of the Fashion-MNIST test set.
  EXPECT_NEAR(test_batch.images.mean().item<double>(), 0.2868, 0.0005);
  EXPECT_NEAR(test_batch.images.std().item<double>(), 0.3524, 0.0005);
  EXPECT_GE(test_batch.images.min().item<float>(), 0.0f);
  EXPECT_LE(test_batch.images.max().item<float>(), 1.0f);
}

}  // namespace

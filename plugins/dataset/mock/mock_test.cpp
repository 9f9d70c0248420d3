#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "orchestrate/dataset.h"
#include "orchestrate/plugin.h"
#include "orchestrate/testing/dataset_batches.h"
#include "orchestrate/testing/plugin_under_test.h"


namespace {

using orchestrate::DatasetSplit;

std::unique_ptr<orchestrate::Dataset> make_mock(DatasetSplit split,
                                                const std::function<void(orchestrate::Params&)>& customize = {}) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.datasets().get("mock");
  auto params = orchestrate::default_params(entry.info.schema);
  if (customize) customize(params);
  return entry.create(params, split);
}

TEST(MockDataset, DefaultsDescribeSmallColourImages) {
  auto train = make_mock(DatasetSplit::train);
  auto test = make_mock(DatasetSplit::test);
  const auto info = train->info();
  EXPECT_EQ(info.channels, 3);
  EXPECT_EQ(info.height, 32);
  EXPECT_EQ(info.width, 32);
  EXPECT_EQ(info.num_classes, 10);
  EXPECT_EQ(train->size(), 1024);
  EXPECT_EQ(test->size(), 256);
}

TEST(MockDataset, BatchHasRequestedShapeRangeAndLabels) {
  auto dataset = make_mock(DatasetSplit::train, [](orchestrate::Params& p) {
    p.set("channels", std::int64_t{1});
    p.set("height", std::int64_t{28});
    p.set("width", std::int64_t{20});
    p.set("num_classes", std::int64_t{4});
    p.set("train_size", std::int64_t{64});
  });
  const auto batch = orchestrate::testing::float_batch(*dataset, {0, 5, 63, 2});
  EXPECT_EQ(batch.images.sizes(), (std::vector<std::int64_t>{4, 1, 28, 20}));
  EXPECT_EQ(batch.images.scalar_type(), at::kFloat);
  EXPECT_GE(batch.images.min().item<float>(), 0.0f);
  EXPECT_LE(batch.images.max().item<float>(), 1.0f);
  EXPECT_GT(batch.images.std().item<float>(), 0.05f);  // not a constant image
  ASSERT_EQ(batch.labels.scalar_type(), at::kLong);
  EXPECT_TRUE(batch.labels.equal(at::tensor(std::vector<std::int64_t>{0, 1, 3, 2})));
}

TEST(MockDataset, SameParamsGiveSameExamplesInAnyOrder) {
  auto first = make_mock(DatasetSplit::train);
  auto second = make_mock(DatasetSplit::train);
  const auto forward = orchestrate::testing::float_batch(*first, {3, 700, 11});
  const auto reversed = orchestrate::testing::float_batch(*second, {11, 700, 3});
  EXPECT_TRUE(forward.images.equal(reversed.images.flip(0)));
  EXPECT_TRUE(forward.labels.equal(reversed.labels.flip(0)));
  EXPECT_TRUE(forward.images.equal(orchestrate::testing::float_batch(*first, {3, 700, 11}).images));
}

TEST(MockDataset, SplitsAndSeedsGiveDifferentImages) {
  auto train = make_mock(DatasetSplit::train);
  auto test = make_mock(DatasetSplit::test);
  auto reseeded = make_mock(DatasetSplit::train, [](orchestrate::Params& p) { p.set("seed", std::int64_t{7}); });
  const std::vector<std::int64_t> indices{0, 1, 2};
  const auto train_batch = orchestrate::testing::float_batch(*train, indices);
  EXPECT_FALSE(train_batch.images.equal(orchestrate::testing::float_batch(*test, indices).images));
  EXPECT_FALSE(train_batch.images.equal(orchestrate::testing::float_batch(*reseeded, indices).images));
  EXPECT_TRUE(train_batch.labels.equal(orchestrate::testing::float_batch(*test, indices).labels));
}

// Learnable: classifying test examples by the nearest per-class mean of
// train examples is far above the 10 % of chance.
TEST(MockDataset, ClassesAreSeparable) {
  auto train = make_mock(DatasetSplit::train);
  auto test = make_mock(DatasetSplit::test);
  std::vector<std::int64_t> train_indices(200), test_indices(100);
  for (std::int64_t i = 0; i < 200; ++i) train_indices[i] = i;
  for (std::int64_t i = 0; i < 100; ++i) test_indices[i] = i;
  const auto train_batch = orchestrate::testing::float_batch(*train, train_indices);
  const auto test_batch = orchestrate::testing::float_batch(*test, test_indices);
  auto class_means = at::zeros({10, 3 * 32 * 32});
  class_means.index_add_(0, train_batch.labels, train_batch.images.flatten(1));
  class_means /= 20;
  const auto distances = at::cdist(test_batch.images.flatten(1), class_means);
  const auto predicted = distances.argmin(1);
  const double accuracy = predicted.eq(test_batch.labels).to(at::kDouble).mean().item<double>();
  EXPECT_GT(accuracy, 0.9);
}

TEST(MockDataset, ConcurrentCallsMatchSerialOnes) {
  auto dataset = make_mock(DatasetSplit::train);
  const std::vector<std::int64_t> indices{1, 2, 3, 4, 5, 6, 7, 8};
  const auto expected = orchestrate::testing::float_batch(*dataset, indices);
  std::vector<orchestrate::Batch> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) threads.emplace_back([&] { result = orchestrate::testing::float_batch(*dataset, indices); });
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_TRUE(result.images.equal(expected.images));
}

TEST(MockDataset, IndexOutsideSplitThrows) {
  auto dataset = make_mock(DatasetSplit::test);
  EXPECT_THROW(orchestrate::testing::float_batch(*dataset, {256}), std::out_of_range);
  EXPECT_THROW(orchestrate::testing::float_batch(*dataset, {-1}), std::out_of_range);
}

}  // namespace

#include "batch_pipeline.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>

#include "orchestrate/error.h"

namespace orchestrate {
namespace {

// Example i is a 2x2 grey image of the value i, so a batch shows which examples it holds.
class CountingDataset : public Dataset {
 public:
  explicit CountingDataset(std::int64_t size, std::int64_t fail_at = -1) : size_(size), fail_at_(fail_at) {}
  DatasetInfo info() const override { return {1, 2, 2, 10, {}}; }
  std::int64_t size() const override { return size_; }
  Example example(const SampleRequest& request) const override {
    ++calls;
    if (request.index == fail_at_) throw DataError("example " + std::to_string(fail_at_) + " is corrupt");
    return {at::full({2, 2, 1}, request.index % 256, at::kByte), request.index % 10};
  }
  mutable std::atomic<int> calls{0};

 private:
  std::int64_t size_;
  std::int64_t fail_at_;
};

// Passes pixels through, or (stamp_seed) overwrites the first with the
// sample's seed, so a test can see which seed each sample was given.
class PassThrough : public Preprocessing {
 public:
  explicit PassThrough(bool stamp_seed = false) : stamp_seed_(stamp_seed) {}
  ImageShape output_shape() const override { return {1, 2, 2}; }
  at::Tensor prepare_sample(const at::Tensor& pixels, std::uint64_t seed) const override {
    auto out = pixels.clone();
    if (stamp_seed_) out.view(-1)[0] = static_cast<std::int64_t>(seed % 251);
    return out;
  }
  at::Tensor finish_batch(const at::Tensor& images) const override { return images; }
  ServingTransform serving_transform() const override { return {}; }

 private:
  bool stamp_seed_;
};

std::vector<std::vector<std::int64_t>> batches_of(std::int64_t count) {
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t b = 0; b < count; ++b) out.push_back({2 * b, 2 * b + 1});
  return out;
}

class BatchPipelineTest : public ::testing::TestWithParam<int> {};

TEST_P(BatchPipelineTest, HandsOutEveryBatchInOrderAsUint8ChannelsLast) {
  CountingDataset dataset(200);
  PassThrough preprocessing;
  BatchPipeline pipeline({dataset, preprocessing}, batches_of(50), {GetParam(), 3, false});
  std::int64_t expected = 0;
  while (auto batch = pipeline.next()) {
    ASSERT_EQ(batch->images.sizes(), (at::IntArrayRef{2, 2, 2, 1}));
    ASSERT_EQ(batch->images.scalar_type(), at::kByte);
    EXPECT_EQ(batch->images[0][1][1][0].item<int>(), expected);
    EXPECT_EQ(batch->images[1][0][0][0].item<int>(), expected + 1);
    EXPECT_EQ(batch->labels[1].item<std::int64_t>(), (expected + 1) % 10);
    expected += 2;
  }
  EXPECT_EQ(expected, 100);
  EXPECT_EQ(dataset.calls.load(), 100);
}

TEST_P(BatchPipelineTest, RethrowsAWorkersErrorAtThatBatch) {
  CountingDataset dataset(200, /*fail_at=*/7);
  PassThrough preprocessing;
  BatchPipeline pipeline({dataset, preprocessing}, batches_of(10), {GetParam(), 2, false});
  for (int b = 0; b < 3; ++b) ASSERT_TRUE(pipeline.next());  // batches 0..2 hold examples 0..5
  try {
    pipeline.next();
    FAIL() << "expected the corrupt example's error";
  } catch (const DataError& e) {
    EXPECT_STREQ(e.what(), "example 7 is corrupt");
  }
}

TEST_P(BatchPipelineTest, StopsEarlyWithoutHanging) {
  CountingDataset dataset(200);
  PassThrough preprocessing;
  {
    BatchPipeline pipeline({dataset, preprocessing}, batches_of(100), {GetParam(), 4, false});
    ASSERT_TRUE(pipeline.next());
  }  // destroyed with most batches never taken
  EXPECT_LE(dataset.calls.load(), 2 * (1 + 4 + GetParam()));  // bounded by the prefetch window
}

// Every sample's seed is a function of (run seed, epoch, index) alone: the
// same with 0, 1 or 3 workers, and new each epoch.
TEST_P(BatchPipelineTest, SampleSeedsDependOnEpochAndIndexOnly) {
  CountingDataset dataset(8);
  PassThrough stamp(/*stamp_seed=*/true);
  const EpochPlan plan = [](std::int64_t epoch) {
    return epoch == 0 ? BatchIndices{{0, 1}, {2, 3}} : BatchIndices{{3, 2}, {1, 0}};
  };
  BatchPipeline pipeline({dataset, stamp, /*seed=*/42}, plan, 2, 2, {GetParam(), 2, false});
  std::vector<int> stamps;
  while (auto batch = pipeline.next())
    for (int i = 0; i < 2; ++i) stamps.push_back(batch->images[i][0][0][0].item<int>());
  std::vector<int> expected;
  for (const auto& [epoch, index] : std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 3}, {1, 2}, {1, 1}, {1, 0}})
    expected.push_back(static_cast<int>(sample_seed(42, epoch, index) % 251));
  EXPECT_EQ(stamps, expected);
  std::set<std::uint64_t> seeds;
  for (int epoch = 0; epoch < 3; ++epoch)
    for (int index = 0; index < 100; ++index) seeds.insert(sample_seed(42, epoch, index));
  EXPECT_EQ(seeds.size(), 300u);
  EXPECT_NE(sample_seed(42, 0, 0), sample_seed(43, 0, 0));
}

INSTANTIATE_TEST_SUITE_P(Workers, BatchPipelineTest, ::testing::Values(0, 1, 3));

}  // namespace
}  // namespace orchestrate

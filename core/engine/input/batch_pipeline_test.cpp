#include "engine/input/batch_pipeline.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>
#include <stdexcept>

#include "engine/input/input_test_data.h"
#include "orchestrate/error.h"

namespace orchestrate {
namespace {

using testing::CountingDataset;
using testing::PassThrough;

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

// Every byte of every batch of two epochs, as one tensor.
at::Tensor all_batches(const Dataset& dataset, const Preprocessing& preprocessing, int workers) {
  const EpochPlan plan = [](std::int64_t epoch) {
    BatchIndices batches;
    for (std::int64_t b = 0; b < 6; ++b) batches.push_back({(5 * b + epoch) % 40, (7 * b + 3) % 40, 39 - b, b});
    return batches;
  };
  BatchPipeline pipeline({dataset, preprocessing, /*seed=*/7}, plan, 6, 2, {workers, 2, false});
  std::vector<at::Tensor> parts;
  while (auto batch = pipeline.next()) {
    parts.push_back(batch->images.flatten());
    parts.push_back(batch->labels.to(at::kByte));
  }
  return at::cat(parts);
}

TEST(BatchPipeline, SameBatchesWhateverTheThreadCount) {
  CountingDataset dataset(40);
  PassThrough stamp(/*stamp_seed=*/true);
  const auto serial = all_batches(dataset, stamp, 0);
  for (const int workers : {1, 2, 5, 8}) EXPECT_TRUE(all_batches(dataset, stamp, workers).equal(serial)) << workers;
}

// Records which thread read each example; each read takes a while, as a JPEG would.
class SlowDataset : public CountingDataset {
 public:
  using CountingDataset::CountingDataset;
  Example example(const SampleRequest& request) const override {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    const std::lock_guard lock(mutex_);
    readers_.insert(std::this_thread::get_id());
    return CountingDataset::example(request);
  }
  std::size_t reader_count() const {
    const std::lock_guard lock(mutex_);
    return readers_.size();
  }

 private:
  mutable std::mutex mutex_;
  mutable std::set<std::thread::id> readers_;
};

// One batch is shared by all the threads, not prepared by one of them.
TEST(BatchPipeline, SpreadsOneBatchOverEveryThread) {
  SlowDataset dataset(64);
  PassThrough preprocessing;
  std::vector<std::int64_t> one_batch(32);
  std::iota(one_batch.begin(), one_batch.end(), 0);
  BatchPipeline pipeline({dataset, preprocessing}, BatchIndices{one_batch}, {4, 1, false});
  const auto batch = pipeline.next();
  ASSERT_TRUE(batch);
  for (std::int64_t i = 0; i < 32; ++i) EXPECT_EQ(batch->images[i][0][0][0].item<int>(), i);
  EXPECT_EQ(dataset.reader_count(), 4u);
}

// The cache keeps what the dataset returned: the second epoch reads nothing
// from the dataset and gives the same pixels; a small budget holds.
TEST(BatchPipeline, CachedExamplesAreNotReadAgainAndTheBudgetHolds) {
  PassThrough stamp(/*stamp_seed=*/true);
  const EpochPlan plan = [](std::int64_t epoch) {
    BatchIndices batches;
    for (std::int64_t b = 0; b < 10; ++b) batches.push_back({(2 * b + epoch) % 20, (2 * b + 1 + epoch) % 20});
    return batches;
  };
  const auto run = [&](CountingDataset& dataset, std::size_t cache_bytes, int workers) {
    BatchPipeline pipeline({dataset, stamp, 3}, plan, 10, 2, {workers, 3, false, cache_bytes});
    std::vector<at::Tensor> parts;
    while (auto batch = pipeline.next()) parts.push_back(batch->images.flatten());
    return std::make_pair(at::cat(parts), pipeline.cache() ? pipeline.cache()->bytes_used() : 0);
  };
  for (const int workers : {0, 3}) {
    SCOPED_TRACE(workers);
    CountingDataset uncached(20), cached(20), bounded(20);
    const auto [expected, no_bytes] = run(uncached, 0, workers);
    EXPECT_EQ(uncached.calls.load(), 40);
    const auto [pixels, bytes] = run(cached, 1 << 20, workers);
    EXPECT_EQ(cached.calls.load(), 20);  // epoch 1 read nothing
    EXPECT_EQ(bytes, 20u * 4);           // 20 examples of 2x2x1 bytes
    EXPECT_TRUE(pixels.equal(expected));
    const auto [bounded_pixels, bounded_bytes] = run(bounded, 5 * 4, workers);  // room for 5 examples
    EXPECT_EQ(bounded_bytes, 5u * 4);
    EXPECT_EQ(bounded.calls.load(), 20 + 15);
    EXPECT_TRUE(bounded_pixels.equal(expected));
  }
}

// Buffers given back are reused: a run allocates about the prefetch window's
// worth, not one per batch; without give_back every batch gets new ones.
TEST(BatchPipeline, ReusesTheBuffersGivenBack) {
  CountingDataset dataset(200);
  PassThrough preprocessing;
  BatchPipeline reusing({dataset, preprocessing}, batches_of(50), {2, 3, false});
  while (auto batch = reusing.next()) reusing.give_back(std::move(*batch));
  EXPECT_LE(reusing.buffer_allocations(), 3 + 1);  // the window, and the one the consumer holds
  BatchPipeline dropping({dataset, preprocessing}, batches_of(50), {2, 3, false});
  while (auto batch = dropping.next()) {
  }
  EXPECT_EQ(dropping.buffer_allocations(), 50);
}

}  // namespace
}  // namespace orchestrate

#include "batch_pipeline.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/full.h>
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include "orchestrate/error.h"

namespace orchestrate {
namespace {

// Image i is filled with the value i, so a batch shows which examples it holds.
class CountingDataset : public Dataset {
 public:
  explicit CountingDataset(std::int64_t size, std::int64_t fail_at = -1) : size_(size), fail_at_(fail_at) {}
  DatasetInfo info() const override { return {1, 2, 2, 10, {}}; }
  std::int64_t size() const override { return size_; }
  Batch get_batch(const std::vector<std::int64_t>& indices) const override {
    ++calls;
    auto images = at::empty({static_cast<std::int64_t>(indices.size()), 1, 2, 2});
    auto labels = at::empty({static_cast<std::int64_t>(indices.size())}, at::kLong);
    for (size_t i = 0; i < indices.size(); ++i) {
      if (indices[i] == fail_at_) throw DataError("example " + std::to_string(fail_at_) + " is corrupt");
      images[i].fill_(static_cast<double>(indices[i]));
      labels[i] = indices[i] % 10;
    }
    return {images, labels};
  }
  mutable std::atomic<int> calls{0};

 private:
  std::int64_t size_;
  std::int64_t fail_at_;
};

std::vector<std::vector<std::int64_t>> batches_of(std::int64_t count) {
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t b = 0; b < count; ++b) out.push_back({2 * b, 2 * b + 1});
  return out;
}

class BatchPipelineTest : public ::testing::TestWithParam<int> {};

TEST_P(BatchPipelineTest, HandsOutEveryBatchInOrder) {
  CountingDataset dataset(200);
  BatchPipeline pipeline(dataset, batches_of(50), {GetParam(), 3, false});
  std::int64_t expected = 0;
  while (auto batch = pipeline.next()) {
    ASSERT_EQ(batch->images.size(0), 2);
    EXPECT_EQ(batch->images[0][0][0][0].item<float>(), static_cast<float>(expected));
    EXPECT_EQ(batch->images[1][0][0][0].item<float>(), static_cast<float>(expected + 1));
    expected += 2;
  }
  EXPECT_EQ(expected, 100);
  EXPECT_EQ(dataset.calls.load(), 50);
}

TEST_P(BatchPipelineTest, RethrowsAWorkersErrorAtThatBatch) {
  CountingDataset dataset(200, /*fail_at=*/7);
  BatchPipeline pipeline(dataset, batches_of(10), {GetParam(), 2, false});
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
  {
    BatchPipeline pipeline(dataset, batches_of(100), {GetParam(), 4, false});
    ASSERT_TRUE(pipeline.next());
  }  // destroyed with most batches never taken
  EXPECT_LE(dataset.calls.load(), 1 + 4 + GetParam());  // bounded by the prefetch window
}

INSTANTIATE_TEST_SUITE_P(Workers, BatchPipelineTest, ::testing::Values(0, 1, 3));

}  // namespace
}  // namespace orchestrate

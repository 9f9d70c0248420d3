// A split kept on the device hands out the batches the pipeline would, in
// its order, from any starting batch, having read each example once; and
// what cannot be kept there is named.
#include "engine/input/resident_batch_feeder.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "engine/input/device_batch_feeder.h"
#include "engine/input/input_test_data.h"

namespace orchestrate {
namespace {

using testing::CountingDataset;
using testing::PassThrough;

// Each epoch a different shuffle of 0..size-1 in batches of 4, as a run's plan is.
EpochPlan shuffled_plan(std::int64_t size) {
  return [size](std::int64_t epoch) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(size));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(static_cast<std::uint64_t>(epoch) + 1));
    BatchIndices batches;
    for (std::size_t i = 0; i + 4 <= order.size(); i += 4)
      batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i),
                           order.begin() + static_cast<std::ptrdiff_t>(i + 4));
    return batches;
  };
}

// Scales uint8 to [0, 1] floats, as a finish_batch does.
class Scaling : public PassThrough {
 public:
  at::Tensor finish_batch(const at::Tensor& images) const override {
    return images.permute({0, 3, 1, 2}).to(at::kFloat).div(255);
  }
};

TEST(ResidentBatchFeeder, HandsOutThePipelinesBatchesInItsOrderFromAnyBatchReadingEachExampleOnce) {
  const std::int64_t size = 2500, per_epoch = size / 4, epochs = 2;
  const Scaling preprocessing;
  for (const std::int64_t first : {std::int64_t{0}, per_epoch - 2}) {  // a fresh run; a run resumed near an epoch's end
    CountingDataset streamed(size), kept(size);
    BatchPipeline pipeline(SampleSource{streamed, preprocessing, 42}, shuffled_plan(size), per_epoch, epochs,
                           PipelineOptions{2, 4}, first);
    DeviceBatchFeeder feeder(pipeline, c10::Device(c10::kCPU));
    ResidentBatchFeeder resident(SampleSource{kept, preprocessing, 42}, shuffled_plan(size), per_epoch, epochs,
                                 PipelineOptions{2, 4}, c10::Device(c10::kCPU), first);
    EXPECT_EQ(kept.calls, size) << "the whole split, read once, before the first batch";
    EXPECT_EQ(resident.examples(), size);
    EXPECT_EQ(resident.bytes(), size * (4 + 8));
    std::int64_t batches = 0;
    while (auto expected = feeder.next()) {
      const auto got = resident.next();
      ASSERT_TRUE(got.has_value()) << "ended early, at batch " << first + batches;
      ASSERT_TRUE(got->images.equal(expected->images)) << "batch " << first + batches;
      ASSERT_TRUE(got->labels.equal(expected->labels)) << "batch " << first + batches;
      EXPECT_EQ(got->images.scalar_type(), at::kFloat);
      ++batches;
    }
    EXPECT_EQ(batches, per_epoch * epochs - first);
    EXPECT_FALSE(resident.next().has_value());
    EXPECT_EQ(kept.calls, size) << "no example is read again";
  }
}

TEST(ResidentBatchFeeder, NamesWhatCannotBeKeptOnTheDevice) {
  const DatasetInfo grey28{1, 28, 28, 10, {}};
  EXPECT_EQ(resident_data_blocker("none", grey28, 60000), "");
  EXPECT_EQ(resident_data_blocker("resnet", grey28, 60000),
            "[preprocessing] resnet prepares each sample on the host, anew every epoch");
  EXPECT_EQ(resident_data_blocker("none", DatasetInfo{3, 0, 0, 10, {}}, 100), "its images differ in size");
  const DatasetInfo imagenet{3, 224, 224, 1000, {}};
  EXPECT_EQ(resident_data_blocker("none", imagenet, 1281167),
            "the training split takes more than 4096 MiB (1281167 examples of 150536 bytes)");
  // Sizes from a damaged file cannot overflow the check.
  EXPECT_NE(resident_data_blocker("none", imagenet, std::int64_t{1} << 62), "");
}

}  // namespace
}  // namespace orchestrate

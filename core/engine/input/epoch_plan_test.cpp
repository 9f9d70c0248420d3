#include "engine/input/epoch_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>
#include <set>

namespace orchestrate {
namespace {

TEST(EpochPlan, ShuffledBatchesArePermutationFixedBySeedAndEpoch) {
  const auto a = shuffled_batches(103, 10, 42, 0, /*drop_last=*/false);
  ASSERT_EQ(a.size(), 11u);
  EXPECT_EQ(a.back().size(), 3u);
  std::set<std::int64_t> seen;
  for (const auto& batch : a) seen.insert(batch.begin(), batch.end());
  EXPECT_EQ(seen.size(), 103u);
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), 102);

  EXPECT_EQ(a, shuffled_batches(103, 10, 42, 0, false));  // same seed and epoch: same order
  EXPECT_NE(a, shuffled_batches(103, 10, 42, 1, false));  // next epoch: another order
  EXPECT_NE(a, shuffled_batches(103, 10, 43, 0, false));  // another seed: another order
}

TEST(EpochPlan, DropLastKeepsOnlyFullBatches) {
  const auto batches = shuffled_batches(103, 10, 1, 0, /*drop_last=*/true);
  ASSERT_EQ(batches.size(), 10u);
  for (const auto& batch : batches) EXPECT_EQ(batch.size(), 10u);
}

TEST(EpochPlan, SequentialBatchesCoverInOrder) {
  const auto batches = sequential_batches(7, 3);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0], (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(batches[2], (std::vector<std::int64_t>{6}));
}


TEST(ShuffleBuffer, IsAPermutationFixedBySeedAndEpoch) {
  const auto order = shuffle_buffer_order(1000, 64, 42, 0);
  std::set<std::int64_t> seen(order.begin(), order.end());
  EXPECT_EQ(order.size(), 1000u);
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(*seen.rbegin(), 999);
  EXPECT_EQ(order, shuffle_buffer_order(1000, 64, 42, 0));
  EXPECT_NE(order, shuffle_buffer_order(1000, 64, 42, 1));
  EXPECT_NE(order, shuffle_buffer_order(1000, 64, 43, 0));
  const auto one = shuffle_buffer_order(50, 1, 42, 0);  // a buffer of one keeps the stream's order
  for (std::size_t i = 0; i < one.size(); ++i) EXPECT_EQ(one[i], static_cast<std::int64_t>(i));
  const auto batches = buffer_shuffled_batches(1000, 64, 10, 42, 0, /*drop_last=*/true);
  ASSERT_EQ(batches.size(), 100u);
  EXPECT_EQ(batches[3][4], order[34]);
}

// TF's Dataset.shuffle: an index is drawn no earlier than buffer_size - 1
// places before its stream position, and once in the buffer it waits a
// geometric number of draws (each draw takes it with probability
// 1/buffer_size). The waits of the indices away from the stream's end are
// checked against that distribution with a chi-square test.
TEST(ShuffleBuffer, DisplacementFollowsTheBuffersDistribution) {
  const std::int64_t size = 20000, buffer = 16, bins = 40;
  const auto order = shuffle_buffer_order(size, buffer, 7, 0);
  std::vector<std::int64_t> position(static_cast<std::size_t>(size));
  for (std::int64_t p = 0; p < size; ++p) position[static_cast<std::size_t>(order[static_cast<std::size_t>(p)])] = p;
  std::vector<double> observed(bins + 1, 0.0);  // waits 0 .. bins-1, then bins and more
  double counted = 0;
  for (std::int64_t index = 0; index < size; ++index) {
    const std::int64_t first_chance = std::max<std::int64_t>(0, index - buffer + 1);  // the draw after it enters
    const std::int64_t wait = position[static_cast<std::size_t>(index)] - first_chance;
    ASSERT_GE(wait, 0) << "index " << index << " came out before it could have entered the buffer";
    if (index < size - 40 * buffer) {  // far from the end, where the draining buffer changes the odds
      observed[static_cast<std::size_t>(std::min(wait, bins))] += 1;
      counted += 1;
    }
  }
  const double p = 1.0 / static_cast<double>(buffer);
  double chi_square = 0;
  for (std::int64_t k = 0; k <= bins; ++k) {
    const double probability = k < bins ? p * std::pow(1 - p, k) : std::pow(1 - p, bins);
    const double expected = probability * counted;
    chi_square += (observed[k] - expected) * (observed[k] - expected) / expected;
  }
  EXPECT_LT(chi_square, 73.4);  // 40 degrees of freedom, p = 0.001
  // And the uniform shuffle it replaces would fail it by far.
  const auto full = shuffled_batches(size, size, 7, 0, false).front();
  std::int64_t far = 0;
  for (std::int64_t p2 = 0; p2 < size; ++p2) far += std::abs(full[static_cast<std::size_t>(p2)] - p2) > 40 * buffer;
  EXPECT_GT(far, size / 2);
}

}  // namespace
}  // namespace orchestrate

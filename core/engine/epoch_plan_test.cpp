#include "epoch_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace
}  // namespace orchestrate

#include "engine/input/rank_shards.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

namespace orchestrate {
namespace {

// Every rank's batches of one epoch, flattened.
std::vector<std::vector<std::int64_t>> epoch_of_each_rank(const RankShards& shards, int world, std::int64_t batch,
                                                          std::int64_t epoch) {
  std::vector<std::vector<std::int64_t>> out;
  for (int r = 0; r < world; ++r) {
    std::vector<std::int64_t> seen;
    for (const auto& b : shards.batches(r, batch, 7, epoch)) {
      EXPECT_EQ(static_cast<std::int64_t>(b.size()), batch);
      seen.insert(seen.end(), b.begin(), b.end());
    }
    out.push_back(seen);
  }
  return out;
}

void expect_disjoint(const std::vector<std::vector<std::int64_t>>& parts) {
  std::set<std::int64_t> all;
  std::size_t total = 0;
  for (const auto& part : parts) {
    all.insert(part.begin(), part.end());
    total += part.size();
  }
  EXPECT_EQ(all.size(), total) << "an index is in two parts (or twice in one)";
}

// 10 files of 37 to 100 records over 4 ranks.
const std::vector<std::int64_t> kFiles{100, 37, 64, 80, 51, 90, 45, 72, 58, 66};

TEST(RankShards, ByFileGivesEachRankWholeFilesDisjointBalancedAndTogetherComplete) {
  std::int64_t size = 0;
  for (const auto n : kFiles) size += n;
  const RankShards shards(size, kFiles, 4);
  ASSERT_TRUE(shards.by_file());
  std::vector<std::vector<std::int64_t>> parts;
  for (int r = 0; r < 4; ++r) parts.push_back(shards.shard(r));
  expect_disjoint(parts);
  std::size_t total = 0;
  std::int64_t smallest = size, largest = 0;
  for (const auto& part : parts) {
    total += part.size();
    smallest = std::min<std::int64_t>(smallest, static_cast<std::int64_t>(part.size()));
    largest = std::max<std::int64_t>(largest, static_cast<std::int64_t>(part.size()));
  }
  EXPECT_EQ(static_cast<std::int64_t>(total), size);  // complete
  // Balanced: largest file first to the emptiest rank leaves the shards
  // within one file of each other; here within the smallest (151, 148, 181, 183).
  EXPECT_LE(largest - smallest, *std::min_element(kFiles.begin(), kFiles.end()));
  EXPECT_EQ(shards.examples_per_rank(), smallest);
  // Whole files: each file's first record's rank holds all of its records.
  std::int64_t first = 0;
  for (const auto n : kFiles) {
    for (const auto& part : parts) {
      const bool has_first = std::binary_search(part.begin(), part.end(), first);
      const bool has_last = std::binary_search(part.begin(), part.end(), first + n - 1);
      EXPECT_EQ(has_first, has_last) << "the file at " << first << " is split between ranks";
    }
    first += n;
  }
  // Each epoch: disjoint, the same number of full batches on every rank, only the rank's own files.
  for (std::int64_t epoch = 0; epoch < 2; ++epoch) {
    const auto read = epoch_of_each_rank(shards, 4, 8, epoch);
    expect_disjoint(read);
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(static_cast<std::int64_t>(read[r].size()), smallest / 8 * 8);
      for (const auto i : read[r]) EXPECT_TRUE(std::binary_search(parts[r].begin(), parts[r].end(), i));
    }
  }
  EXPECT_NE(epoch_of_each_rank(shards, 4, 8, 0), epoch_of_each_rank(shards, 4, 8, 1));  // reshuffled per epoch
}

TEST(RankShards, FewerFilesThanRanksOrNoFilesShardByRecordDisjointBalancedAndComplete) {
  for (const auto& files : {std::vector<std::int64_t>{50, 46}, std::vector<std::int64_t>{}}) {
    const RankShards shards(96, files, 3);
    EXPECT_FALSE(shards.by_file());
    EXPECT_EQ(shards.examples_per_rank(), 32);
    const auto read = epoch_of_each_rank(shards, 3, 4, 0);
    expect_disjoint(read);
    std::set<std::int64_t> all;
    for (const auto& part : read) {
      EXPECT_EQ(part.size(), 32u);  // balanced
      all.insert(part.begin(), part.end());
    }
    EXPECT_EQ(all.size(), 96u);  // complete
  }
}

TEST(RankShards, OneRankReadsEveryRecordWhateverItsFiles) {
  const RankShards shards(12, {5, 7}, 1);
  EXPECT_FALSE(shards.by_file());
  EXPECT_EQ(epoch_of_each_rank(shards, 1, 3, 0)[0].size(), 12u);
}

}  // namespace
}  // namespace orchestrate

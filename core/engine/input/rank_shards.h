// How a data-parallel job splits the training set between its ranks, so
// that in every epoch the ranks' parts are disjoint, balanced and together
// the epoch's examples (FastNN's advice on balanced shards):
//   - by file, when the dataset names its files (Dataset::examples_per_file)
//     and there are at least as many as ranks: each rank reads only whole
//     files of its own, assigned largest first to the rank with the fewest
//     examples so far (the shards end within one file of each other), and
//     shuffles its shard each epoch; every rank takes
//     as many examples per epoch as the smallest shard has, a fresh choice
//     each epoch;
//   - by record otherwise: the epoch is shuffled as one process with the
//     global batch would shuffle it, and rank r takes the r-th slice of each
//     global batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orchestrate {

using ShardBatches = std::vector<std::vector<std::int64_t>>;

class RankShards {
 public:
  // examples_per_file: as Dataset::examples_per_file gives it (may be empty);
  // size: the dataset's.
  RankShards(std::int64_t size, const std::vector<std::int64_t>& examples_per_file, int world_size);

  bool by_file() const { return !files_.empty(); }
  // Examples each rank uses per epoch.
  std::int64_t examples_per_rank() const;
  // The indices rank r may read, sorted: its files' (by file), or all (by record).
  std::vector<std::int64_t> shard(int rank) const;
  // Rank r's full batches of `batch_size` in `epoch`, shuffled by (seed,
  // epoch): a full permutation, or with `shuffle_buffer` > 0 (a stream
  // dataset's [run] shuffle_buffer_size) TF's Dataset.shuffle order, so the
  // rank reads its part nearly front to back.
  ShardBatches batches(int rank, std::int64_t batch_size, std::uint64_t seed, std::int64_t epoch,
                       std::int64_t shuffle_buffer = 0) const;
  // One line for the run's events: the mode and the shards' sizes.
  std::string describe() const;

 private:
  std::int64_t size_;
  int world_size_;
  std::vector<std::vector<std::int64_t>> files_;  // by file: per rank, the [first, end) of each of its files, flattened
  std::vector<std::int64_t> shard_sizes_;         // by file: per rank
};

}  // namespace orchestrate

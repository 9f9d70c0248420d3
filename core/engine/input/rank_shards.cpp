#include "engine/input/rank_shards.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "engine/input/epoch_plan.h"

namespace orchestrate {

RankShards::RankShards(std::int64_t size, const std::vector<std::int64_t>& examples_per_file, int world_size)
    : size_(size), world_size_(world_size) {
  if (world_size < 2 || static_cast<std::int64_t>(examples_per_file.size()) < world_size) return;
  std::vector<std::int64_t> first(examples_per_file.size());
  std::exclusive_scan(examples_per_file.begin(), examples_per_file.end(), first.begin(), std::int64_t{0});
  // Largest file first to the rank with the fewest examples (ties: the lower
  // rank, then the earlier file), so the shards differ by at most one file.
  std::vector<std::size_t> order(examples_per_file.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return examples_per_file[a] > examples_per_file[b]; });
  files_.assign(static_cast<std::size_t>(world_size), {});
  shard_sizes_.assign(static_cast<std::size_t>(world_size), 0);
  for (const auto file : order) {
    const auto rank = static_cast<std::size_t>(
        std::min_element(shard_sizes_.begin(), shard_sizes_.end()) - shard_sizes_.begin());
    files_[rank].push_back(first[file]);
    files_[rank].push_back(first[file] + examples_per_file[file]);
    shard_sizes_[rank] += examples_per_file[file];
  }
}

std::int64_t RankShards::examples_per_rank() const {
  if (!by_file()) return size_ / world_size_;
  return *std::min_element(shard_sizes_.begin(), shard_sizes_.end());
}

std::vector<std::int64_t> RankShards::shard(int rank) const {
  std::vector<std::int64_t> indices;
  if (!by_file()) {
    indices.resize(static_cast<std::size_t>(size_));
    std::iota(indices.begin(), indices.end(), 0);
    return indices;
  }
  const auto& ranges = files_[static_cast<std::size_t>(rank)];
  for (std::size_t i = 0; i < ranges.size(); i += 2)
    for (std::int64_t at = ranges[i]; at < ranges[i + 1]; ++at) indices.push_back(at);
  std::sort(indices.begin(), indices.end());
  return indices;
}

ShardBatches RankShards::batches(int rank, std::int64_t batch_size, std::uint64_t seed, std::int64_t epoch,
                                 std::int64_t shuffle_buffer) const {
  const auto order = [shuffle_buffer](std::int64_t size, std::int64_t batch, std::uint64_t seed_, std::int64_t epoch_) {
    return shuffle_buffer > 0 ? buffer_shuffled_batches(size, shuffle_buffer, batch, seed_, epoch_, true)
                              : shuffled_batches(size, batch, seed_, epoch_, true);
  };
  if (!by_file()) {
    auto global = order(size_, batch_size * world_size_, seed, epoch);
    if (world_size_ == 1) return global;
    ShardBatches slices;
    for (const auto& batch : global)
      slices.emplace_back(batch.begin() + rank * batch_size, batch.begin() + (rank + 1) * batch_size);
    return slices;
  }
  const auto indices = shard(rank);
  // Each rank its own permutation; positions past examples_per_rank() are
  // this epoch's left-out examples of a larger shard.
  const std::uint64_t rank_seed = seed ^ (0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(rank + 1));
  auto positions = order(static_cast<std::int64_t>(indices.size()), batch_size, rank_seed, epoch);
  positions.resize(std::min(positions.size(), static_cast<std::size_t>(examples_per_rank() / batch_size)));
  for (auto& batch : positions)
    for (auto& at : batch) at = indices[static_cast<std::size_t>(at)];
  return positions;
}

std::string RankShards::describe() const {
  std::ostringstream out;
  if (!by_file()) {
    out << "by record: " << world_size_ << " ranks take slices of each global batch of one shuffle of " << size_
        << " examples";
    return out.str();
  }
  out << "by file: " << world_size_ << " ranks, files/examples per rank";
  for (std::size_t r = 0; r < files_.size(); ++r) out << (r ? ", " : " ") << files_[r].size() / 2 << "/" << shard_sizes_[r];
  out << "; each rank uses " << examples_per_rank() << " per epoch";
  return out.str();
}

}  // namespace orchestrate

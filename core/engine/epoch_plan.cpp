#include "epoch_plan.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace orchestrate {

namespace {
std::vector<std::vector<std::int64_t>> cut(const std::vector<std::int64_t>& order, std::int64_t batch_size,
                                           bool drop_last) {
  std::vector<std::vector<std::int64_t>> batches;
  for (size_t start = 0; start < order.size(); start += batch_size) {
    const size_t end = std::min(order.size(), start + static_cast<size_t>(batch_size));
    if (drop_last && end - start < static_cast<size_t>(batch_size)) break;
    batches.emplace_back(order.begin() + start, order.begin() + end);
  }
  return batches;
}
}  // namespace

std::vector<std::vector<std::int64_t>> shuffled_batches(std::int64_t size, std::int64_t batch_size, std::uint64_t seed,
                                                        std::int64_t epoch, bool drop_last) {
  std::vector<std::int64_t> order(size);
  std::iota(order.begin(), order.end(), 0);
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(epoch), 0x0a7cu};
  std::mt19937_64 rng(seq);
  std::shuffle(order.begin(), order.end(), rng);
  return cut(order, batch_size, drop_last);
}

std::vector<std::vector<std::int64_t>> sequential_batches(std::int64_t size, std::int64_t batch_size) {
  std::vector<std::int64_t> order(size);
  std::iota(order.begin(), order.end(), 0);
  return cut(order, batch_size, false);
}

}  // namespace orchestrate

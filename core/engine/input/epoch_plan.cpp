#include "engine/input/epoch_plan.h"

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

std::mt19937_64 epoch_generator(std::uint64_t seed, std::int64_t epoch, std::uint32_t stream) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(epoch), stream};
  return std::mt19937_64(seq);
}
}  // namespace

std::vector<std::vector<std::int64_t>> shuffled_batches(std::int64_t size, std::int64_t batch_size, std::uint64_t seed,
                                                        std::int64_t epoch, bool drop_last) {
  std::vector<std::int64_t> order(size);
  std::iota(order.begin(), order.end(), 0);
  auto rng = epoch_generator(seed, epoch, 0x0a7cu);
  std::shuffle(order.begin(), order.end(), rng);
  return cut(order, batch_size, drop_last);
}

std::vector<std::int64_t> shuffle_buffer_order(std::int64_t size, std::int64_t buffer_size, std::uint64_t seed,
                                               std::int64_t epoch) {
  auto rng = epoch_generator(seed, epoch, 0xb0ffu);
  std::vector<std::int64_t> buffer;
  buffer.reserve(static_cast<std::size_t>(std::min(size, buffer_size)));
  std::vector<std::int64_t> order;
  order.reserve(static_cast<std::size_t>(size));
  std::int64_t next = 0;
  while (next < size && static_cast<std::int64_t>(buffer.size()) < buffer_size) buffer.push_back(next++);
  while (!buffer.empty()) {
    std::uniform_int_distribution<std::size_t> pick(0, buffer.size() - 1);
    const std::size_t drawn = pick(rng);
    order.push_back(buffer[drawn]);
    if (next < size) {
      buffer[drawn] = next++;
    } else {  // the stream is spent: the buffer drains
      buffer[drawn] = buffer.back();
      buffer.pop_back();
    }
  }
  return order;
}

std::vector<std::vector<std::int64_t>> buffer_shuffled_batches(std::int64_t size, std::int64_t buffer_size,
                                                               std::int64_t batch_size, std::uint64_t seed,
                                                               std::int64_t epoch, bool drop_last) {
  return cut(shuffle_buffer_order(size, buffer_size, seed, epoch), batch_size, drop_last);
}

std::vector<std::vector<std::int64_t>> sequential_batches(std::int64_t size, std::int64_t batch_size) {
  std::vector<std::int64_t> order(size);
  std::iota(order.begin(), order.end(), 0);
  return cut(order, batch_size, false);
}

}  // namespace orchestrate

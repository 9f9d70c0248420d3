// The order in which one epoch visits the training set, as batches of indices.
#pragma once

#include <cstdint>
#include <vector>

namespace orchestrate {

// A permutation of [0, size) fixed by (seed, epoch), cut into batches of
// `batch_size`; the last, smaller batch is dropped when `drop_last` (so every
// training step sees a full batch). Deterministic across runs and machines
// with the same standard library.
std::vector<std::vector<std::int64_t>> shuffled_batches(std::int64_t size, std::int64_t batch_size, std::uint64_t seed,
                                                        std::int64_t epoch, bool drop_last);

// [0, size) in order, in batches (the last may be smaller): for evaluation.
std::vector<std::vector<std::int64_t>> sequential_batches(std::int64_t size, std::int64_t batch_size);

}  // namespace orchestrate

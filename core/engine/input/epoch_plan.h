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

// The order TF's Dataset.shuffle(buffer_size) gives a stream of [0, size):
// the buffer is filled with the first `buffer_size` indices, then each step
// draws one of the buffer uniformly with the (seed, epoch) generator and
// refills its place with the next index of the stream. Every index therefore
// comes out at most buffer_size - 1 places before its stream position, and
// the reads a pipeline makes in this order stay within a window of
// buffer_size records of the stream: a sequential dataset is read nearly
// front to back. A buffer of at least `size` gives a uniform permutation.
std::vector<std::int64_t> shuffle_buffer_order(std::int64_t size, std::int64_t buffer_size, std::uint64_t seed,
                                               std::int64_t epoch);

// shuffle_buffer_order cut into batches, like shuffled_batches.
std::vector<std::vector<std::int64_t>> buffer_shuffled_batches(std::int64_t size, std::int64_t buffer_size,
                                                               std::int64_t batch_size, std::uint64_t seed,
                                                               std::int64_t epoch, bool drop_last);

// [0, size) in order, in batches (the last may be smaller): for evaluation.
std::vector<std::vector<std::int64_t>> sequential_batches(std::int64_t size, std::int64_t batch_size);

}  // namespace orchestrate

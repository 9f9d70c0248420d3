// Batch buffers (uint8 images [N, H, W, C] and int64 labels [N], page-locked
// when the batches go to CUDA) kept for reuse, so a run allocates a handful of
// them instead of one per batch: page-locked allocations are slow (they pin
// pages with the driver) and a fresh 256x224x224x3 batch is 38 MB of page
// faults.
//
// Safe because a buffer comes back only through give_back(), and only the
// consumer that read it calls that, once nothing reads it any more
// (DeviceBatchFeeder: on CPU when no tensor but its own shares the memory, on
// CUDA also after the copy's event completed). A batch never given back is
// simply not reused. The pool holds at most the buffers in use at once:
// the prefetch window, the consumer's batch and the copies in flight.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "orchestrate/dataset.h"
#include "orchestrate/preprocessing.h"

namespace orchestrate {

class BatchBufferPool {
 public:
  BatchBufferPool(ImageShape shape, bool pinned);

  // Buffers for `count` examples: a kept pair of that count, or new ones.
  // Their contents are whatever the last batch left (every row is overwritten).
  Batch take(std::int64_t count);
  // Keeps the pair for a later take(). The caller guarantees nothing reads
  // or writes them any more.
  void give_back(Batch buffers);

  std::int64_t allocations() const;  // buffer pairs made so far (for tests and reports)

 private:
  const ImageShape shape_;
  const bool pinned_;
  mutable std::mutex mutex_;
  std::vector<Batch> free_;
  std::int64_t allocations_ = 0;
};

}  // namespace orchestrate

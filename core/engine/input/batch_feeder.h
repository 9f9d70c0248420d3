// Where the training step takes its batches from: finished (the
// preprocessing's float images, int64 labels), on the training device, in
// the epoch plan's order. DeviceBatchFeeder copies them from the host
// pipeline as they are made; ResidentBatchFeeder gathers them from a split
// kept on the device ([run] data_on_device).
#pragma once

#include <optional>

#include "orchestrate/dataset.h"

namespace orchestrate {

class BatchFeeder {
 public:
  virtual ~BatchFeeder() = default;
  // The next batch, usable at once by work queued on the current stream;
  // nullopt at the end.
  virtual std::optional<Batch> next() = 0;
};

}  // namespace orchestrate

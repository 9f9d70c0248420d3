// Prepares batches ahead of the training step on worker threads and hands
// them out in order, so the model never waits on reading and decoding when
// the workers keep up. One pipeline serves a whole run: its threads live
// across epochs (the next epoch's first batches are prepared while the last
// ones of this epoch train) instead of being rebuilt each epoch.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "orchestrate/dataset.h"

namespace orchestrate {

struct PipelineOptions {
  int workers = 2;        // 0: batches are read on the calling thread
  int prefetch = 4;       // batches ready or in flight at most
  bool pin_memory = false;  // page-locked host memory, for fast non-blocking copies to CUDA
};

using BatchIndices = std::vector<std::vector<std::int64_t>>;
// The batches of one epoch (0-based); must be pure in the epoch and give
// `batches_per_epoch` batches every time.
using EpochPlan = std::function<BatchIndices(std::int64_t epoch)>;

class BatchPipeline {
 public:
  // Serves `epochs` epochs of `batches_per_epoch` batches each, in order,
  // starting at batch `first_batch` of that sequence (a resumed run).
  BatchPipeline(const Dataset& dataset, EpochPlan plan, std::int64_t batches_per_epoch, std::int64_t epochs,
                PipelineOptions options, std::int64_t first_batch = 0);
  // Serves exactly `batches`, once.
  BatchPipeline(const Dataset& dataset, BatchIndices batches, PipelineOptions options);
  ~BatchPipeline();  // stops and joins the workers
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  // The next batch in order, or nullopt at the end. Rethrows a worker's error.
  std::optional<Batch> next();
  std::int64_t size() const { return total_; }  // batches over all epochs
  std::int64_t batches_per_epoch() const { return batches_per_epoch_; }

 private:
  struct Slot {
    Batch batch;
    std::exception_ptr error;
  };
  Slot produce(std::int64_t index);
  const std::vector<std::int64_t>& indices_of(std::int64_t index);  // caller holds plan_mutex_
  void work();

  const Dataset& dataset_;
  const EpochPlan plan_;
  const std::int64_t batches_per_epoch_;
  const std::int64_t total_;
  const PipelineOptions options_;

  std::mutex plan_mutex_;
  std::map<std::int64_t, BatchIndices> plans_;  // the epochs in flight (at most two)

  std::mutex mutex_;
  std::condition_variable ready_;  // a slot was filled
  std::condition_variable space_;  // the consumer took a slot, or stop
  std::map<std::int64_t, Slot> done_;
  std::int64_t next_to_claim_ = 0;
  std::int64_t next_to_hand_out_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace orchestrate

// Prepares batches ahead of the training step on worker threads and hands
// them out in order, so the model never waits on reading and decoding when
// the workers keep up. A batch is the dataset's examples, each through the
// preprocessing's per-sample half, stacked as uint8 [N, h, w, C]: the float
// conversion is the preprocessing's finish_batch, on the device, after the copy. One pipeline serves a whole run: its threads live
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
#include "orchestrate/preprocessing.h"

namespace orchestrate {

struct PipelineOptions {
  int workers = 2;        // 0: batches are read on the calling thread
  int prefetch = 4;       // batches ready or in flight at most
  bool pin_memory = false;  // page-locked host memory, for fast non-blocking copies to CUDA
};

// Where a pipeline's samples come from, and what each sample's request says
// besides its index (SampleRequest).
struct SampleSource {
  const Dataset& dataset;
  const Preprocessing& preprocessing;
  std::uint64_t seed = 0;  // the run's: with the epoch and the index it gives every sample's seed
  int rank = 0;
  int world_size = 1;
};

// The seed of example `index` in `epoch`: a hash of the three, so it depends
// on nothing else (not the thread, not the batch the example lands in).
std::uint64_t sample_seed(std::uint64_t run_seed, std::int64_t epoch, std::int64_t index);

// The examples at `indices`, prepared and stacked: uint8 [N, h, w, C] at the
// preprocessing's output shape (in page-locked memory when `pinned`), int64 labels.
Batch prepare_batch(const SampleSource& source, const std::vector<std::int64_t>& indices, std::int64_t epoch,
                    bool pinned);

using BatchIndices = std::vector<std::vector<std::int64_t>>;
// The batches of one epoch (0-based); must be pure in the epoch and give
// `batches_per_epoch` batches every time.
using EpochPlan = std::function<BatchIndices(std::int64_t epoch)>;

class BatchPipeline {
 public:
  // Serves `epochs` epochs of `batches_per_epoch` batches each, in order,
  // starting at batch `first_batch` of that sequence (a resumed run).
  BatchPipeline(SampleSource source, EpochPlan plan, std::int64_t batches_per_epoch, std::int64_t epochs,
                PipelineOptions options, std::int64_t first_batch = 0);
  // Serves exactly `batches`, once (as epoch 0).
  BatchPipeline(SampleSource source, BatchIndices batches, PipelineOptions options);
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

  const SampleSource source_;
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

// Prepares batches ahead of the training step on a thread pool and hands
// them out in order, so the model never waits on reading and decoding when
// the threads keep up. A batch is the dataset's examples, each through the
// preprocessing's per-sample half, stacked as uint8 [N, h, w, C]. The float
// conversion is the preprocessing's finish_batch: for CUDA on the device,
// after the copy (DeviceBatchFeeder), a quarter of the bytes over the bus;
// for CPU training here, by the pool thread that completes the batch
// (PipelineOptions::finish_on_host), so the training thread only trains.
//
// Parallelism is per sample: every thread of the pool works on the oldest
// unfinished batch, taking its examples one at a time, so a batch of 256
// JPEGs on N threads is ready about N times sooner than on one, and a slow
// example holds up one thread, not its batch's others. Rows land at their
// place in the batch and every example's randomness comes from its own seed
// (sample_seed), so a batch is the same whatever the thread count.
//
// One pipeline serves a whole run: its threads live across epochs (the next
// epoch's first batches are prepared while the last ones of this epoch
// train), its batch buffers are reused (BatchBufferPool) and, when asked, its
// decoded examples are kept (ExampleCache).
#pragma once

#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "crash_report/plugin_call.h"
#include "engine/input/batch_buffer_pool.h"
#include "engine/input/example_cache.h"
#include "orchestrate/dataset.h"
#include "orchestrate/preprocessing.h"

namespace orchestrate {

struct PipelineOptions {
  int workers = 2;        // pool threads; 0: batches are read on the calling thread
  int prefetch = 4;       // batches ready or in preparation at most
  bool pin_memory = false;  // page-locked host memory, for fast non-blocking copies to CUDA
  std::size_t cache_bytes = 0;  // keep decoded examples up to this many bytes (ExampleCache); 0: none
  // Batches are handed out finished (finish_batch's float tensor) rather
  // than uint8: for a CPU device. Measured on 2 cores (bench-input, resnet
  // preset, 2 workers): the training thread's finish_batch started a team of
  // intra-op threads that spun between its two ops, 10 % of the CPU time.
  bool finish_on_host = false;
};

// Where a pipeline's samples come from, and what each sample's request says
// besides its index (SampleRequest).
struct SampleSource {
  const Dataset& dataset;
  const Preprocessing& preprocessing;
  std::uint64_t seed = 0;  // the run's: with the epoch and the index it gives every sample's seed
  int rank = 0;
  int world_size = 1;
  // The plugins behind the two, named to a crash on a pipeline thread
  // (crash_handler.h); empty: not named.
  PluginCallSite dataset_site = {};
  PluginCallSite preprocessing_site = {};
};

// The seed of example `index` in `epoch`: a hash of the three, so it depends
// on nothing else (not the thread, not the batch the example lands in).
std::uint64_t sample_seed(std::uint64_t run_seed, std::int64_t epoch, std::int64_t index);

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
  ~BatchPipeline();  // stops the threads after the example each is on
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  // The next batch in order (uint8 [N, h, w, C] images, int64 labels, in
  // page-locked memory with pin_memory; finished images with
  // finish_on_host), or nullopt at the end. Rethrows the error of an example
  // of that batch.
  std::optional<Batch> next();
  // The next batch if it is ready now, without waiting; nullopt otherwise
  // (and always without threads, where nothing is prepared ahead).
  std::optional<Batch> next_if_ready();
  // Takes a batch's buffers back for reuse. Call it only once nothing reads
  // or writes them any more (BatchBufferPool); a batch not given back is
  // simply not reused.
  void give_back(Batch batch);

  bool finishes_batches() const { return options_.finish_on_host; }
  const Preprocessing& preprocessing() const { return source_.preprocessing; }
  std::int64_t size() const { return total_; }  // batches over all epochs
  std::int64_t batches_per_epoch() const { return batches_per_epoch_; }
  std::int64_t buffer_allocations() const { return buffers_.allocations(); }
  const ExampleCache* cache() const { return cache_ ? &*cache_ : nullptr; }

 private:
  struct Work;  // one batch in preparation
  std::shared_ptr<Work> start(std::int64_t index);  // its indices and buffers
  void claim();                                      // starts the batches the prefetch window allows
  void help(Work& work);                             // prepares the batch's examples not yet taken
  void prepare_example(Work& work, std::int64_t row);
  void finish(Work& work);                           // finish_on_host: finish_batch on the completed batch
  Example fetch(const SampleRequest& request);       // the dataset's example, or the cache's
  std::optional<Batch> hand_out(std::shared_ptr<Work> work);
  const std::vector<std::int64_t>& indices_of(std::int64_t index);

  const SampleSource source_;
  const EpochPlan plan_;
  const std::int64_t batches_per_epoch_;
  const std::int64_t total_;
  const PipelineOptions options_;
  const ImageShape shape_;
  BatchBufferPool buffers_;
  std::optional<ExampleCache> cache_;
  std::map<std::int64_t, BatchIndices> plans_;  // the epochs in flight (at most two); the consumer's thread only

  std::mutex mutex_;
  std::condition_variable ready_;  // a batch was finished
  std::map<std::int64_t, std::shared_ptr<Work>> claimed_;  // started, not yet handed out
  std::int64_t next_to_claim_ = 0;
  std::int64_t next_to_hand_out_ = 0;
  std::atomic<bool> stopping_{false};
  std::optional<boost::asio::thread_pool> pool_;  // none without workers
};

}  // namespace orchestrate

// Prepares batches ahead of the training step on worker threads and hands
// them out in order, so the model never waits on reading and decoding when
// the workers keep up.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
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

class BatchPipeline {
 public:
  BatchPipeline(const Dataset& dataset, std::vector<std::vector<std::int64_t>> batches, PipelineOptions options);
  ~BatchPipeline();  // stops and joins the workers
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  // The next batch in order, or nullopt at the end. Rethrows a worker's error.
  std::optional<Batch> next();
  std::size_t size() const { return batches_.size(); }

 private:
  struct Slot {
    Batch batch;
    std::exception_ptr error;
  };
  Slot produce(std::size_t index) const;
  void work();

  const Dataset& dataset_;
  const std::vector<std::vector<std::int64_t>> batches_;
  const PipelineOptions options_;

  std::mutex mutex_;
  std::condition_variable ready_;  // a slot was filled
  std::condition_variable space_;  // the consumer took a slot, or stop
  std::map<std::size_t, Slot> done_;
  std::size_t next_to_claim_ = 0;
  std::size_t next_to_hand_out_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace orchestrate

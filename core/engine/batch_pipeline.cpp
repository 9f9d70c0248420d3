#include "batch_pipeline.h"

#include <c10/util/ParallelGuard.h>

namespace orchestrate {

BatchPipeline::BatchPipeline(const Dataset& dataset, EpochPlan plan, std::int64_t batches_per_epoch,
                             std::int64_t epochs, PipelineOptions options, std::int64_t first_batch)
    : dataset_(dataset),
      plan_(std::move(plan)),
      batches_per_epoch_(batches_per_epoch),
      total_(batches_per_epoch * epochs),
      options_(options),
      next_to_claim_(first_batch),
      next_to_hand_out_(first_batch) {
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { work(); });
}

BatchPipeline::BatchPipeline(const Dataset& dataset, BatchIndices batches, PipelineOptions options)
    : BatchPipeline(
          dataset, [batches](std::int64_t) { return batches; }, static_cast<std::int64_t>(batches.size()), 1,
          options) {}

BatchPipeline::~BatchPipeline() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  space_.notify_all();
  for (auto& worker : workers_) worker.join();
}

const std::vector<std::int64_t>& BatchPipeline::indices_of(std::int64_t index) {
  const std::int64_t epoch = index / batches_per_epoch_;
  auto it = plans_.find(epoch);
  if (it == plans_.end()) {
    it = plans_.emplace(epoch, plan_(epoch)).first;
    // Workers claim batches in order within the prefetch window, so no
    // batch of an epoch two back can still be wanted.
    while (plans_.size() > 2 && plans_.begin()->first < epoch) plans_.erase(plans_.begin());
  }
  return it->second.at(static_cast<std::size_t>(index % batches_per_epoch_));
}

BatchPipeline::Slot BatchPipeline::produce(std::int64_t index) {
  Slot slot;
  try {
    std::vector<std::int64_t> indices;
    {
      std::lock_guard lock(plan_mutex_);
      indices = indices_of(index);
    }
    slot.batch = dataset_.get_batch(indices);
    if (options_.pin_memory) {
      slot.batch.images = slot.batch.images.pin_memory();
      slot.batch.labels = slot.batch.labels.pin_memory();
    }
  } catch (...) {
    slot.error = std::current_exception();
  }
  return slot;
}

void BatchPipeline::work() {
  // Tensor ops in a worker run on the worker alone: without this guard each
  // worker's ops would start their own team of intra-op threads, and on a
  // small machine those teams fight the training step's for the cores
  // (measured on 2 cores: forward+backward 47 -> 66 ms per ConvNet step).
  c10::ParallelGuard single_threaded(true);
  while (true) {
    std::int64_t index;
    {
      std::unique_lock lock(mutex_);
      // Claim work only within the prefetch window, so memory stays bounded.
      space_.wait(lock, [&] {
        return stopping_ || next_to_claim_ >= total_ || next_to_claim_ < next_to_hand_out_ + options_.prefetch;
      });
      if (stopping_ || next_to_claim_ >= total_) return;
      index = next_to_claim_++;
    }
    Slot slot = produce(index);
    {
      std::lock_guard lock(mutex_);
      done_.emplace(index, std::move(slot));
    }
    ready_.notify_all();
  }
}

std::optional<Batch> BatchPipeline::next() {
  if (next_to_hand_out_ >= total_) return std::nullopt;
  Slot slot;
  if (workers_.empty()) {
    slot = produce(next_to_hand_out_++);
  } else {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return done_.count(next_to_hand_out_) != 0; });
    auto it = done_.find(next_to_hand_out_);
    slot = std::move(it->second);
    done_.erase(it);
    ++next_to_hand_out_;
    lock.unlock();
    space_.notify_all();
  }
  if (slot.error) std::rethrow_exception(slot.error);
  return std::move(slot.batch);
}

}  // namespace orchestrate

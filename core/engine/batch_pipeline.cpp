#include "batch_pipeline.h"

namespace orchestrate {

BatchPipeline::BatchPipeline(const Dataset& dataset, std::vector<std::vector<std::int64_t>> batches,
                             PipelineOptions options)
    : dataset_(dataset), batches_(std::move(batches)), options_(options) {
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { work(); });
}

BatchPipeline::~BatchPipeline() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  space_.notify_all();
  for (auto& worker : workers_) worker.join();
}

BatchPipeline::Slot BatchPipeline::produce(std::size_t index) const {
  Slot slot;
  try {
    slot.batch = dataset_.get_batch(batches_[index]);
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
  while (true) {
    std::size_t index;
    {
      std::unique_lock lock(mutex_);
      // Claim work only within the prefetch window, so memory stays bounded.
      space_.wait(lock, [&] {
        return stopping_ || next_to_claim_ >= batches_.size() ||
               next_to_claim_ < next_to_hand_out_ + static_cast<std::size_t>(options_.prefetch);
      });
      if (stopping_ || next_to_claim_ >= batches_.size()) return;
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
  if (next_to_hand_out_ >= batches_.size()) return std::nullopt;
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

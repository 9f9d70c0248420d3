#include "batch_pipeline.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/tensor.h>
#include <c10/util/ParallelGuard.h>

#include <cstring>
#include <stdexcept>

#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// splitmix64's finaliser: neighbouring inputs give unrelated outputs.
std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string shape_text(at::IntArrayRef sizes) {
  std::string out;
  for (const auto side : sizes) out += (out.empty() ? "" : "x") + std::to_string(side);
  return out;
}

}  // namespace

std::uint64_t sample_seed(std::uint64_t run_seed, std::int64_t epoch, std::int64_t index) {
  return mix(mix(run_seed, static_cast<std::uint64_t>(epoch)), static_cast<std::uint64_t>(index));
}

Batch prepare_batch(const SampleSource& source, const std::vector<std::int64_t>& indices, std::int64_t epoch,
                    bool pinned) {
  const ImageShape shape = source.preprocessing.output_shape();
  const std::int64_t min_side = source.preprocessing.min_input_side();
  const auto count = static_cast<std::int64_t>(indices.size());
  auto images = at::empty({count, shape.height, shape.width, shape.channels},
                          at::TensorOptions().dtype(at::kByte).pinned_memory(pinned));
  std::vector<std::int64_t> labels(indices.size());
  const std::int64_t sample_bytes = shape.height * shape.width * shape.channels;
  auto* out = images.data_ptr<std::uint8_t>();
  for (std::int64_t i = 0; i < count; ++i) {
    SampleRequest request;
    request.index = indices[static_cast<std::size_t>(i)];
    request.epoch = epoch;
    request.seed = sample_seed(source.seed, epoch, request.index);
    request.rank = source.rank;
    request.world_size = source.world_size;
    request.min_side = min_side;
    const Example example = source.dataset.example(request);
    const auto pixels = source.preprocessing.prepare_sample(example.pixels, request.seed);
    if (pixels.scalar_type() != at::kByte || pixels.dim() != 3 || pixels.size(0) != shape.height ||
        pixels.size(1) != shape.width || pixels.size(2) != shape.channels)
      throw Error("[preprocessing] prepared example " + std::to_string(request.index) + " as " +
                  shape_text(pixels.sizes()) + " " + std::string(c10::toString(pixels.scalar_type())) +
                  " where its output shape is " + shape_text({shape.height, shape.width, shape.channels}) +
                  " uint8 (a plugin bug)");
    std::memcpy(out + i * sample_bytes, pixels.contiguous().data_ptr<std::uint8_t>(),
                static_cast<std::size_t>(sample_bytes));
    labels[static_cast<std::size_t>(i)] = example.label;
  }
  return {images, at::tensor(labels)};
}

BatchPipeline::BatchPipeline(SampleSource source, EpochPlan plan, std::int64_t batches_per_epoch,
                             std::int64_t epochs, PipelineOptions options, std::int64_t first_batch)
    : source_(source),
      plan_(std::move(plan)),
      batches_per_epoch_(batches_per_epoch),
      total_(batches_per_epoch * epochs),
      options_(options),
      next_to_claim_(first_batch),
      next_to_hand_out_(first_batch) {
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { work(); });
}

BatchPipeline::BatchPipeline(SampleSource source, BatchIndices batches, PipelineOptions options)
    : BatchPipeline(
          source, [batches](std::int64_t) { return batches; }, static_cast<std::int64_t>(batches.size()), 1,
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
    slot.batch = prepare_batch(source_, indices, index / batches_per_epoch_, options_.pin_memory);
    if (options_.pin_memory) slot.batch.labels = slot.batch.labels.pin_memory();
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

#include "engine/input/batch_pipeline.h"

#include <boost/asio/post.hpp>
#include <c10/util/ParallelGuard.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "checkpoint/safetensors.h"
#include "engine/input/sole_owner.h"
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

}  // namespace

std::uint64_t sample_seed(std::uint64_t run_seed, std::int64_t epoch, std::int64_t index) {
  return mix(mix(run_seed, static_cast<std::uint64_t>(epoch)), static_cast<std::uint64_t>(index));
}

// The threads share a batch by taking its rows from `next_row`; the one that
// finishes the last row marks it ready. The rows' writes are ordered before
// `ready` by the atomic count and the mutex, so the consumer sees them all.
struct BatchPipeline::Work {
  std::int64_t epoch = 0;
  std::vector<std::int64_t> indices;
  Batch batch;  // buffers from the pool, filled row by row
  std::atomic<std::int64_t> next_row{0};
  std::atomic<std::int64_t> rows_done{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;  // of the first failed row (the lowest, so the report does not depend on timing)
  std::int64_t error_row = -1;
  bool ready = false;  // guarded by the pipeline's mutex_

  std::int64_t rows() const { return static_cast<std::int64_t>(indices.size()); }
  void fail(std::int64_t row, std::exception_ptr cause) {
    const std::lock_guard lock(error_mutex);
    if (!error || row < error_row) {
      error = std::move(cause);
      error_row = row;
    }
    failed = true;
  }
};

BatchPipeline::BatchPipeline(SampleSource source, EpochPlan plan, std::int64_t batches_per_epoch,
                             std::int64_t epochs, PipelineOptions options, std::int64_t first_batch)
    : source_(source),
      plan_(std::move(plan)),
      batches_per_epoch_(batches_per_epoch),
      total_(batches_per_epoch * epochs),
      options_(options),
      shape_(source.preprocessing.output_shape()),
      buffers_(shape_, options.pin_memory),
      next_to_claim_(first_batch),
      next_to_hand_out_(first_batch) {
  if (options_.cache_bytes > 0) cache_.emplace(source.dataset.size(), options_.cache_bytes);
  if (options_.workers > 0) {
    pool_.emplace(static_cast<std::size_t>(options_.workers));
    claim();
  }
}

BatchPipeline::BatchPipeline(SampleSource source, BatchIndices batches, PipelineOptions options)
    : BatchPipeline(
          source, [batches](std::int64_t) { return batches; }, static_cast<std::int64_t>(batches.size()), 1,
          options) {}

BatchPipeline::~BatchPipeline() {
  stopping_ = true;  // each thread skips the rows it has not begun
  if (pool_) pool_->join();
}

const std::vector<std::int64_t>& BatchPipeline::indices_of(std::int64_t index) {
  const std::int64_t epoch = index / batches_per_epoch_;
  auto it = plans_.find(epoch);
  if (it == plans_.end()) {
    it = plans_.emplace(epoch, plan_(epoch)).first;
    // Batches are started in order within the prefetch window, so no batch
    // of an epoch two back can still be wanted.
    while (plans_.size() > 2 && plans_.begin()->first < epoch) plans_.erase(plans_.begin());
  }
  return it->second.at(static_cast<std::size_t>(index % batches_per_epoch_));
}

std::shared_ptr<BatchPipeline::Work> BatchPipeline::start(std::int64_t index) {
  auto work = std::make_shared<Work>();
  work->epoch = index / batches_per_epoch_;
  try {
    work->indices = indices_of(index);
    work->batch = buffers_.take(work->rows());
  } catch (...) {
    work->fail(0, std::current_exception());
  }
  return work;
}

// On the consumer's thread: starting a batch is cheap (its indices, buffers
// from the pool), but the plan of a new epoch is made here too, once an epoch.
void BatchPipeline::claim() {
  if (!pool_) return;
  while (true) {
    std::int64_t index;
    {
      const std::lock_guard lock(mutex_);
      if (next_to_claim_ >= total_ || next_to_claim_ >= next_to_hand_out_ + options_.prefetch) return;
      index = next_to_claim_++;
    }
    auto work = start(index);
    const std::int64_t helpers = work->failed ? 0 : std::min<std::int64_t>(options_.workers, work->rows());
    {
      const std::lock_guard lock(mutex_);
      work->ready = helpers == 0;
      claimed_.emplace(index, work);
    }
    if (helpers == 0) ready_.notify_all();
    // Every thread joins the batch; the pool runs tasks in order, so the
    // oldest batch gets the threads first.
    for (std::int64_t h = 0; h < helpers; ++h) boost::asio::post(*pool_, [this, work] { help(*work); });
  }
}

void BatchPipeline::help(Work& work) {
  // Tensor ops in a pool thread run on that thread alone: without this guard
  // each thread's ops would start their own team of intra-op threads, and on
  // a small machine those teams fight the training step's for the cores
  // (measured on 2 cores: forward+backward 47 -> 66 ms per ConvNet step).
  c10::ParallelGuard single_threaded(pool_.has_value());
  const std::int64_t rows = work.rows();
  for (std::int64_t row = work.next_row++; row < rows; row = work.next_row++) {
    if (!stopping_ && !work.failed) {
      try {
        prepare_example(work, row);
      } catch (...) {
        work.fail(row, std::current_exception());
      }
    }
    if (++work.rows_done == rows) {
      if (options_.finish_on_host && !work.failed) finish(work);
      {
        const std::lock_guard lock(mutex_);
        work.ready = true;
      }
      ready_.notify_all();
    }
  }
}

namespace {

// A scope only for a named site: tools and tests build pipelines without one.
class OptionalCallScope {
 public:
  OptionalCallScope(const PluginCallSite& site, const char* call) {
    if (!site.plugin.empty()) scope_.emplace(site, call);
  }

 private:
  std::optional<PluginCallScope> scope_;
};

}  // namespace

Example BatchPipeline::fetch(const SampleRequest& request) {
  if (cache_)
    if (auto kept = cache_->find(request.index)) return *kept;
  const OptionalCallScope in_dataset(source_.dataset_site, "example");
  Example example = source_.dataset.example(request);
  if (cache_) cache_->offer(request.index, example);
  return example;
}

void BatchPipeline::prepare_example(Work& work, std::int64_t row) {
  SampleRequest request;
  request.index = work.indices[static_cast<std::size_t>(row)];
  request.epoch = work.epoch;
  request.seed = sample_seed(source_.seed, work.epoch, request.index);
  request.rank = source_.rank;
  request.world_size = source_.world_size;
  // The decoder may skip what the preprocessing will not use; but a kept
  // example must serve every epoch's window, so with the cache on the
  // dataset decodes whole images and the window is cut out here.
  const Preprocessing& preprocessing = source_.preprocessing;
  if (!cache_)
    request.window = [&preprocessing, seed = request.seed](std::int64_t height, std::int64_t width) {
      return preprocessing.decode_window(height, width, seed);
    };
  const Example example = fetch(request);
  const OptionalCallScope in_preprocessing(source_.preprocessing_site, "prepare_sample");
  const auto pixels = example.windowed ? preprocessing.prepare_sample(example.pixels, request.seed)
                                       : prepare_whole_image(preprocessing, example.pixels, request.seed);
  if (pixels.scalar_type() != at::kByte || pixels.dim() != 3 || pixels.size(0) != shape_.height ||
      pixels.size(1) != shape_.width || pixels.size(2) != shape_.channels)
    throw Error("[preprocessing] prepared example " + std::to_string(request.index) + " as " +
                shape_text(pixels.sizes()) + " " + std::string(c10::toString(pixels.scalar_type())) +
                " where its output shape is " + shape_text({shape_.height, shape_.width, shape_.channels}) +
                " uint8 (a plugin bug)");
  const std::int64_t row_bytes = shape_.height * shape_.width * shape_.channels;
  std::memcpy(work.batch.images.data_ptr<std::uint8_t>() + row * row_bytes,
              pixels.contiguous().data_ptr<std::uint8_t>(), static_cast<std::size_t>(row_bytes));
  work.batch.labels.data_ptr<std::int64_t>()[row] = example.label;
}

void BatchPipeline::finish(Work& work) {
  try {
    Batch staged = std::move(work.batch);
    const OptionalCallScope in_preprocessing(source_.preprocessing_site, "finish_batch");
    work.batch.images = source_.preprocessing.finish_batch(staged.images);
    // The labels go out with the finished images; the uint8 buffer goes
    // back to the pool at once, unless the finished tensor is a view of it.
    work.batch.labels = staged.labels.clone();
    if (sole_owner(staged.images)) buffers_.give_back(std::move(staged));
  } catch (...) {
    work.fail(0, std::current_exception());
  }
}

std::optional<Batch> BatchPipeline::hand_out(std::shared_ptr<Work> work) {
  claim();  // a place in the prefetch window is free
  if (work->error) {
    if (work->batch.images.defined()) give_back(std::move(work->batch));
    std::rethrow_exception(work->error);
  }
  return std::move(work->batch);
}

std::optional<Batch> BatchPipeline::next() {
  if (next_to_hand_out_ >= total_) return std::nullopt;
  std::shared_ptr<Work> work;
  if (!pool_) {
    work = start(next_to_hand_out_);
    if (!work->failed) help(*work);
  } else {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] {
      const auto it = claimed_.find(next_to_hand_out_);
      return it != claimed_.end() && it->second->ready;
    });
    const auto it = claimed_.find(next_to_hand_out_);
    work = std::move(it->second);
    claimed_.erase(it);
  }
  {
    const std::lock_guard lock(mutex_);
    ++next_to_hand_out_;
  }
  return hand_out(std::move(work));
}

std::optional<Batch> BatchPipeline::next_if_ready() {
  if (!pool_ || next_to_hand_out_ >= total_) return std::nullopt;
  std::shared_ptr<Work> work;
  {
    const std::lock_guard lock(mutex_);
    const auto it = claimed_.find(next_to_hand_out_);
    if (it == claimed_.end() || !it->second->ready) return std::nullopt;
    work = std::move(it->second);
    claimed_.erase(it);
    ++next_to_hand_out_;
  }
  return hand_out(std::move(work));
}

void BatchPipeline::give_back(Batch batch) { buffers_.give_back(std::move(batch)); }

}  // namespace orchestrate

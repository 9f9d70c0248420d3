#include "engine/input/resident_batch_feeder.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>
#include <utility>

namespace orchestrate {

namespace {

// Examples per batch of the one pass that reads the split: large enough that
// the pipeline's threads share each batch, small enough to hold little twice.
constexpr std::int64_t kReadBatch = 1024;

std::string mebibytes(std::int64_t bytes) {
  return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
}

}  // namespace

std::string resident_data_blocker(const std::string& preprocessing, const DatasetInfo& data, std::int64_t examples) {
  if (preprocessing != "none")
    return "[preprocessing] " + preprocessing + " prepares each sample on the host, anew every epoch";
  if (data.height <= 0 || data.width <= 0 || data.channels <= 0) return "its images differ in size";
  // Checked before multiplying out: sizes come from the data set's files.
  const std::int64_t per_example =
      data.channels * data.height * data.width + static_cast<std::int64_t>(sizeof(std::int64_t));
  if (examples > kResidentDataMaxBytes / per_example)
    return "the training split takes more than " + mebibytes(kResidentDataMaxBytes) + " (" +
           std::to_string(examples) + " examples of " + std::to_string(per_example) + " bytes)";
  return "";
}

ResidentBatchFeeder::ResidentBatchFeeder(const SampleSource& source, EpochPlan plan, std::int64_t batches_per_epoch,
                                         std::int64_t epochs, PipelineOptions options, c10::Device device,
                                         std::int64_t first_batch)
    : preprocessing_(source.preprocessing),
      plan_(std::move(plan)),
      batches_per_epoch_(batches_per_epoch),
      total_(batches_per_epoch * epochs),
      device_(device),
      next_(first_batch) {
  const std::int64_t n = source.dataset.size();
  BatchIndices reads;
  for (std::int64_t start = 0; start < n; start += kReadBatch) {
    reads.emplace_back(static_cast<std::size_t>(std::min(kReadBatch, n - start)));
    std::iota(reads.back().begin(), reads.back().end(), start);
  }
  // uint8 rows, as they cross to the device; finished per batch there. One
  // pass: a cache of decoded examples would only hold them twice.
  options.pin_memory = false;
  options.finish_on_host = false;
  options.cache_bytes = 0;
  std::vector<at::Tensor> images, labels;
  {
    BatchPipeline reader(source, std::move(reads), options);
    while (auto batch = reader.next()) {
      images.push_back(std::move(batch->images));
      labels.push_back(std::move(batch->labels));
    }
  }
  images_ = at::cat(images).to(device_);
  labels_ = at::cat(labels).to(device_);
}

std::int64_t ResidentBatchFeeder::bytes() const {
  return static_cast<std::int64_t>(images_.nbytes() + labels_.nbytes());
}

// One upload of the epoch's indices an epoch, so a batch is a slice of a
// tensor already on the device. From pinned memory and not waited for: a
// copy from pageable memory would make this step wait for the device
// (`--sync-debug` fails on it), and the pinned block is not reused before
// its copy is done (ATen's host allocator records the copy's stream).
void ResidentBatchFeeder::load_plan(std::int64_t epoch) {
  const BatchIndices batches = plan_(epoch);
  std::vector<std::int64_t> flat;
  starts_.clear();
  lengths_.clear();
  for (const auto& batch : batches) {
    starts_.push_back(static_cast<std::int64_t>(flat.size()));
    lengths_.push_back(static_cast<std::int64_t>(batch.size()));
    flat.insert(flat.end(), batch.begin(), batch.end());
  }
  at::Tensor host = at::tensor(flat, at::kLong);
  if (device_.is_cuda()) host = host.pin_memory();
  epoch_indices_ = host.to(device_, /*non_blocking=*/true);
  planned_epoch_ = epoch;
}

std::optional<Batch> ResidentBatchFeeder::next() {
  if (next_ >= total_) return std::nullopt;
  const std::int64_t epoch = next_ / batches_per_epoch_;
  const auto row = static_cast<std::size_t>(next_ % batches_per_epoch_);
  if (epoch != planned_epoch_) load_plan(epoch);
  const at::Tensor indices = epoch_indices_.narrow(0, starts_.at(row), lengths_.at(row));
  Batch batch{images_.index_select(0, indices), labels_.index_select(0, indices)};
  batch.images = preprocessing_.finish_batch(batch.images);
  ++next_;
  return batch;
}

}  // namespace orchestrate

// Small data kept on the training device ([run] data_on_device), as airbench
// keeps CIFAR-10 on the GPU: the whole training split is read once through
// the pipeline (every example, in index order), kept as one uint8 tensor on
// the device, and each batch is gathered there by its indices and finished
// there. Per batch the host only queues an index_select and finish_batch's
// kernels: no reading, no copy over the bus, so the input cannot hold back a
// short step (the ConvNet's on an H200 waited 18 % of its 3.1 ms for data).
//
// It hands out the batches the pipeline would, in the same order (the same
// epoch plan), finished by the same finish_batch, so a run computes the same
// numbers either way; on the CPU, bit for bit (tested).
//
// Only for a split whose samples do not change between epochs: one without
// [preprocessing] (random augmentation happens per sample on the host), of
// one image size, and at most kResidentDataMaxBytes.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/input/batch_feeder.h"
#include "engine/input/batch_pipeline.h"

namespace orchestrate {

// The largest training split kept on the device: its uint8 images and int64 labels.
inline constexpr std::int64_t kResidentDataMaxBytes = std::int64_t{4} << 30;

// Why the training split `data` of `examples` cannot be kept on the device,
// or "". `preprocessing`: the recipe's [preprocessing] plugin, "none" without one.
std::string resident_data_blocker(const std::string& preprocessing, const DatasetInfo& data, std::int64_t examples);

class ResidentBatchFeeder : public BatchFeeder {
 public:
  // Reads the whole split through a pipeline of `options`' threads (the
  // caller's time: set-up), then serves `epochs` epochs of `plan`'s
  // batches from batch `first_batch` on (a resumed run), on `device`.
  ResidentBatchFeeder(const SampleSource& source, EpochPlan plan, std::int64_t batches_per_epoch,
                      std::int64_t epochs, PipelineOptions options, c10::Device device, std::int64_t first_batch = 0);

  std::optional<Batch> next() override;

  std::int64_t examples() const { return images_.size(0); }
  std::int64_t bytes() const;

 private:
  void load_plan(std::int64_t epoch);

  const Preprocessing& preprocessing_;
  const EpochPlan plan_;
  const std::int64_t batches_per_epoch_;
  const std::int64_t total_;
  const c10::Device device_;
  std::int64_t next_;
  at::Tensor images_;  // uint8 [N, h, w, C], on the device
  at::Tensor labels_;  // int64 [N], on the device
  std::int64_t planned_epoch_ = -1;
  at::Tensor epoch_indices_;            // the planned epoch's batches, one after another, on the device
  std::vector<std::int64_t> starts_;    // where each batch begins in epoch_indices_
  std::vector<std::int64_t> lengths_;   // and its size
};

}  // namespace orchestrate

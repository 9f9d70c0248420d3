// The input tests' small data: a data set whose example i shows i, and a
// preprocessing that passes samples through, so a batch shows which
// examples it holds and which seeds they were given.
#pragma once

#include <ATen/ATen.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/preprocessing.h"

namespace orchestrate::testing {

// Example i is a 2x2 grey image of the value i, so a batch shows which examples it holds.
class CountingDataset : public Dataset {
 public:
  explicit CountingDataset(std::int64_t size, std::int64_t fail_at = -1) : size_(size), fail_at_(fail_at) {}
  DatasetInfo info() const override { return {1, 2, 2, 10, {}}; }
  std::int64_t size() const override { return size_; }
  Example example(const SampleRequest& request) const override {
    ++calls;
    if (request.index == fail_at_) throw DataError("example " + std::to_string(fail_at_) + " is corrupt");
    return {at::full({2, 2, 1}, request.index % 256, at::kByte), request.index % 10};
  }
  mutable std::atomic<int> calls{0};

 private:
  std::int64_t size_;
  std::int64_t fail_at_;
};

// Passes pixels through, or (stamp_seed) overwrites the first with the
// sample's seed, so a test can see which seed each sample was given.
class PassThrough : public Preprocessing {
 public:
  explicit PassThrough(bool stamp_seed = false) : stamp_seed_(stamp_seed) {}
  ImageShape output_shape() const override { return {1, 2, 2}; }
  at::Tensor prepare_sample(const at::Tensor& pixels, std::uint64_t seed) const override {
    auto out = pixels.clone();
    if (stamp_seed_) out.view(-1)[0] = static_cast<std::int64_t>(seed % 251);
    return out;
  }
  at::Tensor finish_batch(const at::Tensor& images) const override { return images; }
  ServingTransform serving_transform() const override { return {}; }

 private:
  bool stamp_seed_;
};

}  // namespace orchestrate::testing

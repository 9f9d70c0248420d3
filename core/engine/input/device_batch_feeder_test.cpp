#include "device_batch_feeder.h"

#include <ATen/Context.h>
#include <ATen/ops/full.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace orchestrate {
namespace {

// Example i: 4x4 RGB of the value i; label i % 10.
class ValueDataset : public Dataset {
 public:
  DatasetInfo info() const override { return {3, 4, 4, 10, {}}; }
  std::int64_t size() const override { return 1000; }
  Example example(const SampleRequest& request) const override {
    return {at::full({4, 4, 3}, request.index % 256, at::kByte), request.index % 10};
  }
};

// Hands out the pixels as they are, or (as_view) a view of them, as a
// preprocessing whose finish_batch is a reshape would.
class Identity : public Preprocessing {
 public:
  ImageShape output_shape() const override { return {3, 4, 4}; }
  at::Tensor prepare_sample(const at::Tensor& pixels, std::uint64_t) const override { return pixels; }
  at::Tensor finish_batch(const at::Tensor& images) const override { return images.permute({0, 3, 1, 2}); }
  ServingTransform serving_transform() const override { return {}; }
};

BatchIndices batches_of(std::int64_t count, std::int64_t size) {
  BatchIndices out;
  for (std::int64_t b = 0; b < count; ++b) {
    out.emplace_back();
    for (std::int64_t i = 0; i < size; ++i) out.back().push_back(b * size + i);
  }
  return out;
}

void expect_batch(const Batch& batch, std::int64_t b, std::int64_t size) {
  const auto images = batch.images.cpu();
  const auto labels = batch.labels.cpu();
  for (std::int64_t i = 0; i < size; ++i) {
    ASSERT_EQ(images[i][3][2][1].item<int>(), (b * size + i) % 256) << "batch " << b << " row " << i;
    ASSERT_EQ(labels[i].item<std::int64_t>(), (b * size + i) % 10);
  }
}

// The path the trainer takes on this machine's device: CPU everywhere, and
// CUDA too where there is one (the side stream, events and pinned buffers).
std::vector<std::string> devices() {
  std::vector<std::string> out{"cpu"};
  if (at::hasCUDA()) out.emplace_back("cuda");
  return out;
}

class DeviceBatchFeederTest : public ::testing::TestWithParam<std::string> {
 protected:
  c10::Device device() const { return c10::Device(GetParam()); }
  PipelineOptions options(int workers) const { return {workers, 3, device().is_cuda()}; }
};

// Every batch arrives on the device, in order, and the buffers are reused
// (the pool makes only about the prefetch window's worth).
TEST_P(DeviceBatchFeederTest, HandsOutEveryBatchOnTheDeviceAndReusesBuffers) {
  for (const int workers : {0, 2}) {
    SCOPED_TRACE(workers);
    ValueDataset dataset;
    Identity preprocessing;
    BatchPipeline pipeline({dataset, preprocessing}, batches_of(40, 8), options(workers));
    DeviceBatchFeeder feeder(pipeline, device());
    std::int64_t b = 0;
    while (auto batch = feeder.next()) {
      ASSERT_EQ(batch->images.device().type(), device().type());
      ASSERT_EQ(batch->labels.device().type(), device().type());
      ASSERT_EQ(batch->images.sizes(), (at::IntArrayRef{8, 4, 4, 3}));
      const auto finished = preprocessing.finish_batch(batch->images);  // a view, dropped with the batch
      expect_batch(*batch, b++, 8);
    }
    EXPECT_EQ(b, 40);
    EXPECT_LE(pipeline.buffer_allocations(), 3 + 3);
  }
}

// A batch the consumer still holds (or a view of it) is never overwritten:
// its buffers are not reused until nothing but the feeder refers to them.
TEST_P(DeviceBatchFeederTest, NeverReusesABufferStillHeld) {
  ValueDataset dataset;
  Identity preprocessing;
  BatchPipeline pipeline({dataset, preprocessing}, batches_of(20, 4), options(2));
  DeviceBatchFeeder feeder(pipeline, device());
  std::vector<Batch> kept;
  std::vector<at::Tensor> views;
  while (auto batch = feeder.next()) {
    if (kept.size() % 2 == 0) {
      views.push_back(preprocessing.finish_batch(batch->images));  // only a view outlives the batch
      kept.push_back({});
    } else {
      kept.push_back(*batch);
    }
  }
  ASSERT_EQ(kept.size(), 20u);
  for (std::size_t b = 0; b < kept.size(); ++b) {
    if (b % 2 == 0) {
      ASSERT_EQ(views[b / 2].select(1, 1)[3][3][2].item<int>(), static_cast<int>(b * 4 + 3) % 256) << b;
    } else {
      expect_batch(kept[b], static_cast<std::int64_t>(b), 4);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AvailableDevices, DeviceBatchFeederTest, ::testing::ValuesIn(devices()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace orchestrate

#include "engine/input/device_batch_feeder.h"

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

// Finishes a batch as a view of its uint8 pixels, NCHW, as a preprocessing
// whose finish_batch is a reshape would.
class Identity : public Preprocessing {
 public:
  ImageShape output_shape() const override { return {3, 4, 4}; }
  at::Tensor prepare_sample(const at::Tensor& pixels, std::uint64_t) const override { return pixels; }
  at::Tensor finish_batch(const at::Tensor& images) const override { return images.permute({0, 3, 1, 2}); }
  ServingTransform serving_transform() const override { return {}; }
};

// Finishes a batch into a new float tensor, NCHW, as the presets do.
class ToFloat : public Identity {
 public:
  at::Tensor finish_batch(const at::Tensor& images) const override {
    return images.permute({0, 3, 1, 2}).to(at::kFloat);
  }
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
    ASSERT_EQ(images[i][1][3][2].item<int>(), (b * size + i) % 256) << "batch " << b << " row " << i;
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
  // finish_on_host: the pipeline's threads finish the batches (as for CPU
  // training); otherwise the feeder does, on the device.
  PipelineOptions options(int workers, bool finish_on_host) const {
    PipelineOptions options{workers, 3, device().is_cuda()};
    options.finish_on_host = finish_on_host;
    return options;
  }
};

// Every batch arrives on the device, finished, in order, and the uint8
// buffers are reused (the pool makes only about the prefetch window's worth),
// whoever finishes the batches.
TEST_P(DeviceBatchFeederTest, HandsOutEveryBatchFinishedOnTheDeviceAndReusesBuffers) {
  for (const bool finish_on_host : {false, true})
    for (const int workers : {0, 2}) {
      SCOPED_TRACE(std::to_string(workers) + " workers, finish_on_host " + std::to_string(finish_on_host));
      ValueDataset dataset;
      ToFloat preprocessing;
      BatchPipeline pipeline({dataset, preprocessing}, batches_of(40, 8), options(workers, finish_on_host));
      DeviceBatchFeeder feeder(pipeline, device());
      std::int64_t b = 0;
      while (auto batch = feeder.next()) {
        ASSERT_EQ(batch->images.device().type(), device().type());
        ASSERT_EQ(batch->labels.device().type(), device().type());
        ASSERT_EQ(batch->images.sizes(), (at::IntArrayRef{8, 3, 4, 4}));
        ASSERT_EQ(batch->images.scalar_type(), at::kFloat);
        expect_batch(*batch, b++, 8);
      }
      EXPECT_EQ(b, 40);
      EXPECT_LE(pipeline.buffer_allocations(), 3 + 3);
    }
}

// A batch the consumer still holds (or a view of it) is never overwritten:
// its buffers are not reused until nothing but the feeder refers to them,
// and a finished batch that is a view of its uint8 buffer keeps that buffer.
TEST_P(DeviceBatchFeederTest, NeverReusesABufferStillHeld) {
  for (const bool finish_on_host : {false, true}) {
    SCOPED_TRACE(finish_on_host);
    ValueDataset dataset;
    Identity preprocessing;
    BatchPipeline pipeline({dataset, preprocessing}, batches_of(20, 4), options(2, finish_on_host));
    DeviceBatchFeeder feeder(pipeline, device());
    std::vector<Batch> kept;
    std::vector<at::Tensor> views;
    while (auto batch = feeder.next()) {
      if (kept.size() % 2 == 0) {
        views.push_back(batch->images.select(1, 1));  // only a view outlives the batch
        kept.push_back({});
      } else {
        kept.push_back(*batch);
      }
    }
    ASSERT_EQ(kept.size(), 20u);
    for (std::size_t b = 0; b < kept.size(); ++b) {
      if (b % 2 == 0) {
        ASSERT_EQ(views[b / 2][3][3][2].item<int>(), static_cast<int>(b * 4 + 3) % 256) << b;
      } else {
        expect_batch(kept[b], static_cast<std::int64_t>(b), 4);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AvailableDevices, DeviceBatchFeederTest, ::testing::ValuesIn(devices()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace orchestrate

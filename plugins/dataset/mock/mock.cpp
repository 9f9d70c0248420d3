// Synthetic labelled images, so smoke tests and throughput benchmarks run
// without data on disk (PAI FastNN's `mock` data set). Unlike pure noise they
// are learnable: every example is its class's fixed prototype plus noise, so
// a test can demand accuracy well above chance. An example costs a
// saturating add per byte (microseconds), so a GPU benchmark on mock data
// measures the training step, not the generator; it never stands in for a
// decoder (scripts/bench/input_pipeline.py reads real JPEGs).
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrate/dataset.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

using orchestrate::Example;
using orchestrate::SampleRequest;
using orchestrate::DatasetInfo;
using orchestrate::DatasetSplit;
using orchestrate::Params;

// Prototype pixels stay away from 0 and 1 so that the noise is rarely clipped.
constexpr double kPrototypeLow = 0.2;
constexpr double kPrototypeHigh = 0.8;
constexpr double kNoiseStddev = 0.15;
constexpr std::int64_t kPrototypeGrid = 4;
// Places in the noise table an example's noise may start: examples share the
// table, each reading it from its own offset.
constexpr std::int64_t kNoiseStarts = 65536;

// splitmix64's finaliser: turns neighbouring keys (index 0, 1, 2, ...) into
// unrelated values (generator seeds, noise offsets), so examples differ.
std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr std::uint64_t kPrototypeStream = 0;
std::uint64_t split_stream(DatasetSplit split) { return split == DatasetSplit::train ? 1 : 2; }

class MockDataset final : public orchestrate::Dataset {
 public:
  MockDataset(const Params& params, DatasetSplit split)
      : channels_(params.integer("channels")),
        height_(params.integer("height")),
        width_(params.integer("width")),
        num_classes_(params.integer("num_classes")),
        size_(params.integer(split == DatasetSplit::train ? "train_size" : "test_size")),
        example_seed_(mix(static_cast<std::uint64_t>(params.integer("seed")), split_stream(split))) {
    const auto seed = static_cast<std::uint64_t>(params.integer("seed"));
    // Prototypes are coarse (a 4x4 grid per channel, scaled up): a pattern of
    // large blocks that a convolutional model picks up in a few dozen steps,
    // where pixel-level noise patterns take pooling layers hundreds.
    auto coarse = at::empty({num_classes_, channels_, kPrototypeGrid, kPrototypeGrid}, at::kFloat);
    for (std::int64_t label = 0; label < num_classes_; ++label) {
      auto generator = at::make_generator<at::CPUGeneratorImpl>(mix(mix(seed, kPrototypeStream), label));
      coarse[label].uniform_(kPrototypeLow, kPrototypeHigh, generator);
    }
    // Stored as decoded images are: uint8, channels last.
    prototypes_ = at::upsample_nearest2d(coarse, {height_, width_})
                      .mul_(255.0)
                      .round_()
                      .to(at::kByte)
                      .permute({0, 2, 3, 1})
                      .contiguous();
    // Gaussian noise in pixel levels, drawn once per split; kept within int8.
    auto generator = at::make_generator<at::CPUGeneratorImpl>(example_seed_);
    noise_ = at::empty({channels_ * height_ * width_ + kNoiseStarts}, at::kFloat)
                 .normal_(0.0, kNoiseStddev * 255.0, generator)
                 .round_()
                 .clamp_(-127, 127)
                 .to(at::kChar);
  }

  DatasetInfo info() const override { return {channels_, height_, width_, num_classes_, {}}; }

  std::int64_t size() const override { return size_; }

  Example example(const SampleRequest& request) const override {
    const std::int64_t index = request.index;
    if (index < 0 || index >= size_)
      throw std::out_of_range("mock dataset: index " + std::to_string(index) + " is outside [0, " +
                              std::to_string(size_) + ")");
    const std::int64_t label = index % num_classes_;
    // The class's prototype plus a window of the noise table starting at a
    // place drawn from the example's seed: one saturating add per byte, so
    // an example costs microseconds and a benchmark on mock data measures
    // the pipeline, not the generator. The example depends neither on the
    // order in which examples are asked for nor on the epoch.
    const auto start = static_cast<std::int64_t>(mix(example_seed_, static_cast<std::uint64_t>(index)) % kNoiseStarts);
    auto image = at::empty({height_, width_, channels_}, at::kByte);
    const std::int64_t count = image.numel();
    const std::uint8_t* prototype = prototypes_.data_ptr<std::uint8_t>() + label * count;
    const std::int8_t* noise = noise_.data_ptr<std::int8_t>() + start;
    std::uint8_t* out = image.data_ptr<std::uint8_t>();
    for (std::int64_t i = 0; i < count; ++i)
      out[i] = static_cast<std::uint8_t>(std::clamp(prototype[i] + noise[i], 0, 255));
    return {image, label};
  }

 private:
  std::int64_t channels_;
  std::int64_t height_;
  std::int64_t width_;
  std::int64_t num_classes_;
  std::int64_t size_;
  std::uint64_t example_seed_;
  at::Tensor prototypes_;  // uint8 [num_classes, H, W, C]; only read after construction
  at::Tensor noise_;       // int8 [H * W * C + kNoiseStarts]; only read after construction
};

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      int_param("channels", 3, "image channels").at_least(1).with_role(orchestrate::ParamRole::image_channels),
      int_param("height", 32, "image height in pixels").at_least(1).with_role(orchestrate::ParamRole::image_height),
      int_param("width", 32, "image width in pixels").at_least(1).with_role(orchestrate::ParamRole::image_width),
      int_param("num_classes", 10, "number of classes; the label of example i is i % num_classes")
          .at_least(2)
          .with_role(orchestrate::ParamRole::num_classes),
      int_param("train_size", 1024, "examples in the train split").at_least(1),
      int_param("test_size", 256, "examples in the test split").at_least(1),
      int_param("seed", 0, "fixes the class prototypes and every example's noise").at_least(0),
  };
  registry.datasets().add(
      "mock", "synthetic learnable images: a fixed prototype per class plus noise", std::move(schema),
      [](const Params& params, const orchestrate::DatasetContext& context) {
        return std::make_unique<MockDataset>(params, context.split);
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("mock", "1.0.0", register_components)

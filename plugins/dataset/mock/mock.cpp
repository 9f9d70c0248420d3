// Synthetic labelled images, so smoke tests and throughput benchmarks run
// without data on disk (PAI FastNN's `mock` data set). Unlike pure noise they
// are learnable: every example is its class's fixed prototype plus noise, so
// a test can demand accuracy well above chance.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

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

// splitmix64's finaliser: turns neighbouring keys (index 0, 1, 2, ...) into
// unrelated generator seeds, so each example's noise is independent.
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
    prototypes_ = at::upsample_nearest2d(coarse, {height_, width_}).contiguous();
  }

  DatasetInfo info() const override { return {channels_, height_, width_, num_classes_, {}}; }

  std::int64_t size() const override { return size_; }

  Example example(const SampleRequest& request) const override {
    const std::int64_t index = request.index;
    if (index < 0 || index >= size_)
      throw std::out_of_range("mock dataset: index " + std::to_string(index) + " is outside [0, " +
                              std::to_string(size_) + ")");
    const std::int64_t label = index % num_classes_;
    // A generator per example, not per dataset: no shared mutable state
    // between pipeline threads, and the example depends neither on the order
    // in which examples are asked for nor on the epoch.
    auto generator = at::make_generator<at::CPUGeneratorImpl>(mix(example_seed_, index));
    auto image = at::empty({channels_, height_, width_}, at::kFloat);
    image.normal_(0.0, kNoiseStddev, generator).add_(prototypes_[label]).clamp_(0.0, 1.0);
    // Stored as a decoded image would be: uint8 pixels, channels last.
    return {image.mul_(255.0).round_().to(at::kByte).permute({1, 2, 0}).contiguous(), label};
  }

 private:
  std::int64_t channels_;
  std::int64_t height_;
  std::int64_t width_;
  std::int64_t num_classes_;
  std::int64_t size_;
  std::uint64_t example_seed_;
  at::Tensor prototypes_;  // [num_classes, C, H, W]; only read after construction
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

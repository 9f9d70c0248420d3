// dataset "{{name}}": a small synthetic labelled set made from a seed.
// Class k's images are dark noise with a bright horizontal band in the k-th
// of num_classes bands, so a model can learn it. Replace it with your reader.
//
// The interface and its contract: orchestrate/dataset.h (info() describes the
// examples; example() returns one example's uint8 [H, W, C] pixels and its
// label, is safe to call from several threads at once, and throws
// std::out_of_range outside [0, size())). Resizing, augmentation and
// conversion to float belong to a preprocessing. orchestrate's
// DatasetConformance test (tests/conformance) checks it.
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

constexpr std::int64_t kSide = 28;  // images are 1 x 28 x 28

class {{Name}} final : public orchestrate::Dataset {
 public:
  {{Name}}(const orchestrate::Params& params, orchestrate::DatasetSplit split)
      : num_classes_(params.integer("num_classes")),
        size_(params.integer(split == orchestrate::DatasetSplit::train ? "train_size" : "test_size")),
        // The splits draw from different streams, so no test image is a training image.
        seed_(2 * static_cast<std::uint64_t>(params.integer("seed")) +
              (split == orchestrate::DatasetSplit::test ? 1 : 0)) {}

  orchestrate::DatasetInfo info() const override { return {1, kSide, kSide, num_classes_, {}}; }

  std::int64_t size() const override { return size_; }

  orchestrate::Example example(const orchestrate::SampleRequest& request) const override {
    if (request.index < 0 || request.index >= size_)
      throw std::out_of_range("{{name}}: index " + std::to_string(request.index) + " is outside [0, " +
                              std::to_string(size_) + ")");
    const std::int64_t label = request.index % num_classes_;
    const std::int64_t band = kSide / num_classes_;
    // The image depends on the dataset's seed and the index only (request.seed
    // is for augmentation): the same example in every epoch, on every thread.
    auto generator =
        at::make_generator<at::CPUGeneratorImpl>(seed_ * 1000003 + static_cast<std::uint64_t>(request.index));
    auto pixels = at::empty({kSide, kSide, 1}, at::kFloat).uniform_(0.0, 128.0, generator);
    pixels.narrow(0, label * band, band).add_(127.0);
    return {pixels.to(at::kByte).contiguous(), label};  // uint8 [H, W, C]
  }

 private:
  std::int64_t num_classes_;
  std::int64_t size_;
  std::uint64_t seed_;
};

void register_components(orchestrate::Registry& registry) {
  // Every key a recipe may set, with its default, documentation and range;
  // the host validates the [data] table against it before anything runs.
  orchestrate::ParamSchema schema{
      orchestrate::int_param("num_classes", 4, "classes; the label of example i is i % num_classes")
          .between(2, kSide)
          .with_role(orchestrate::ParamRole::num_classes),
      orchestrate::int_param("train_size", 512, "examples in the train split").at_least(1),
      orchestrate::int_param("test_size", 128, "examples in the test split").at_least(1),
      orchestrate::int_param("seed", 0, "fixes every example's noise").at_least(0),
  };
  registry.datasets().add("{{name}}", "synthetic 28x28 images: a bright band per class on noise", std::move(schema),
                          [](const orchestrate::Params& params, const orchestrate::DatasetContext& context) {
                            return std::make_unique<{{Name}}>(params, context.split);
                          });
}

}  // namespace

ORCHESTRATE_PLUGIN("{{name}}", "0.1.0", register_components)

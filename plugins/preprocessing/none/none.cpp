// The default [preprocessing]: what the pipeline did before preprocessing was
// a kind. No resize, no augmentation, pixels / 255, no mean/std; so the
// dataset's images must all have one size (Fashion-MNIST's 28x28 grey), and
// a recipe without a [preprocessing] table trains on exactly the numbers it did.
#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "orchestrate/error.h"
#include "orchestrate/plugin.h"
#include "orchestrate/preprocessing.h"
#include "orchestrate/registry.h"

namespace {

using namespace orchestrate;

class NoPreprocessing final : public Preprocessing {
 public:
  explicit NoPreprocessing(const PreprocessingContext& context)
      : shape_{context.data.channels, context.data.height, context.data.width} {
    if (shape_.height <= 0 || shape_.width <= 0)
      throw RecipeError(
          "[preprocessing] none: the dataset's images differ in size and none does not resize; choose a "
          "preprocessing that does ([preprocessing] plugin = \"resnet\" or \"inception\") or give the dataset a "
          "fixed size ([data] height and width)");
  }

  ImageShape output_shape() const override { return shape_; }

  at::Tensor prepare_sample(const at::Tensor& pixels, std::uint64_t) const override {
    if (pixels.size(0) != shape_.height || pixels.size(1) != shape_.width || pixels.size(2) != shape_.channels)
      throw DataError("[preprocessing] none: an example of " + std::to_string(pixels.size(0)) + "x" +
                      std::to_string(pixels.size(1)) + "x" + std::to_string(pixels.size(2)) + " where the dataset "
                      "declared " + std::to_string(shape_.height) + "x" + std::to_string(shape_.width) + "x" +
                      std::to_string(shape_.channels) + " (a dataset bug)");
    return pixels.contiguous();
  }

  // The same values as the datasets' float batches before preprocessing
  // existed (uint8 -> float, / 255), in a freshly laid out NCHW tensor: a
  // permuted view of one grey channel would carry channels-last strides, and
  // the convolutions would then take another kernel path with other roundings.
  at::Tensor finish_batch(const at::Tensor& images) const override {
    auto out = at::empty({images.size(0), images.size(3), images.size(1), images.size(2)},
                         images.options().dtype(at::kFloat));
    return out.copy_(images.permute({0, 3, 1, 2})).div_(255.0);
  }

  ServingTransform serving_transform() const override { return {}; }

 private:
  ImageShape shape_;
};

void register_components(Registry& registry) {
  registry.preprocessing().add(
      "none", "no resize or augmentation: the dataset's fixed-size pixels scaled to [0, 1] (28x28 grey data)", {},
      [](const Params&, const PreprocessingContext& context) { return std::make_unique<NoPreprocessing>(context); });
}

}  // namespace

ORCHESTRATE_PLUGIN("none_preprocessing", "1.0.0", register_components)

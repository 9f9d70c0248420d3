// preprocessing "{{name}}": the train variant flips each image left-right
// with probability 1/2 (drawn from the sample's seed); both variants scale
// pixels to [0, 1] and normalize them as (x - mean) / std. No resize: the
// dataset's images must have one size. Replace prepare_sample with your own
// crops and colour changes, and finish_batch with your own normalization.
//
// The interface and its contract: orchestrate/preprocessing.h
// (prepare_sample runs per example on the pipeline's threads and draws every
// random choice from the seed it is given; finish_batch runs on the
// training device; the train and eval variants give one output shape).
// orchestrate's PreprocessingConformance test (tests/conformance) checks it.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <memory>
#include <string>
#include <utility>

#include "orchestrate/error.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/preprocessing.h"
#include "orchestrate/registry.h"

namespace {

class {{Name}} final : public orchestrate::Preprocessing {
 public:
  {{Name}}(const orchestrate::Params& params, const orchestrate::PreprocessingContext& context)
      : shape_{context.data.channels, context.data.height, context.data.width},
        flip_(params.boolean("flip") && context.variant == orchestrate::PreprocessingVariant::train),
        mean_(params.real("mean")),
        std_(params.real("std")) {
    if (shape_.height <= 0 || shape_.width <= 0)
      throw orchestrate::RecipeError("[preprocessing] {{name}}: the dataset's images differ in size and {{name}} "
                                     "does not resize; give the dataset a fixed size ([data] height and width)");
  }

  orchestrate::ImageShape output_shape() const override { return shape_; }

  at::Tensor prepare_sample(const at::Tensor& pixels, std::uint64_t seed) const override {
    if (!flip_) return pixels.contiguous();
    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    const bool flip = generator.get<at::CPUGeneratorImpl>()->random() % 2 == 1;
    return flip ? pixels.flip({1}).contiguous() : pixels.contiguous();
  }

  // uint8 NHWC to float NCHW, laid out afresh (not a permuted view).
  at::Tensor finish_batch(const at::Tensor& images) const override {
    auto out = at::empty({images.size(0), images.size(3), images.size(1), images.size(2)},
                         images.options().dtype(at::kFloat));
    return out.copy_(images.permute({0, 3, 1, 2})).div_(255.0).sub_(mean_).div_(std_);
  }

  // What a serving export applies before the model: the eval variant's normalization.
  orchestrate::ServingTransform serving_transform() const override {
    orchestrate::ServingTransform transform;
    transform.mean = {mean_};
    transform.std = {std_};
    return transform;
  }

 private:
  orchestrate::ImageShape shape_;
  bool flip_;
  double mean_, std_;
};

void register_components(orchestrate::Registry& registry) {
  // Every key a recipe may set, with its default, documentation and range;
  // the host validates the [preprocessing] table against it before anything runs.
  orchestrate::ParamSchema schema{
      orchestrate::bool_param("flip", true, "train: flip each image left-right with probability 1/2"),
      orchestrate::real_param("mean", 0.5, "subtracted from every [0, 1] pixel").between(0, 1),
      orchestrate::real_param("std", 0.5, "then divides it").greater_than(0),
  };
  registry.preprocessing().add(
      "{{name}}", "a seeded left-right flip (train) and one mean/std for every channel", std::move(schema),
      [](const orchestrate::Params& params, const orchestrate::PreprocessingContext& context) {
        return std::make_unique<{{Name}}>(params, context);
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("{{name}}", "0.1.0", register_components)

// LeNet-5 (LeCun et al., 1998) in its common modern form: ReLU instead of
// tanh, max instead of average pooling, and a padded first conv so that
// 28x28 MNIST-style images keep the 32x32 geometry of the original.
#include <ATen/ATen.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <memory>
#include <string>

#include "orchestrate/error.h"
#include "orchestrate/model.h"
#include "orchestrate/model_presets.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

using orchestrate::ModelInput;

constexpr std::int64_t kKernelSize = 5;
constexpr std::int64_t kPoolSize = 2;

// Side length after conv1 (padded, same size), pool, conv2 (unpadded), pool.
std::int64_t feature_side(std::int64_t input_side) { return (input_side / kPoolSize - (kKernelSize - 1)) / kPoolSize; }

class LeNet5 final : public orchestrate::Model {
 public:
  explicit LeNet5(const ModelInput& input) {
    const std::int64_t feature_height = feature_side(input.height);
    const std::int64_t feature_width = feature_side(input.width);
    if (feature_height < 1 || feature_width < 1)
      throw orchestrate::RecipeError("[model] lenet: a " + std::to_string(input.height) + "x" +
                                     std::to_string(input.width) +
                                     " input is too small; LeNet-5 needs images of at least 12x12 (28x28 or more "
                                     "as designed)");
    conv1_ = register_module("conv1",
                             torch::nn::Conv2d(torch::nn::Conv2dOptions(input.channels, 6, kKernelSize).padding(2)));
    conv2_ = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(6, 16, kKernelSize)));
    fc1_ = register_module("fc1", torch::nn::Linear(16 * feature_height * feature_width, 120));
    fc2_ = register_module("fc2", torch::nn::Linear(120, 84));
    fc3_ = register_module("fc3", torch::nn::Linear(84, input.num_classes));
  }

  at::Tensor forward(const at::Tensor& images) override {
    auto features = at::max_pool2d(conv1_->forward(images).relu(), kPoolSize);
    features = at::max_pool2d(conv2_->forward(features).relu(), kPoolSize);
    const auto hidden = fc2_->forward(fc1_->forward(features.flatten(1)).relu()).relu();
    return fc3_->forward(hidden);
  }

 private:
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::Conv2d conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr};
  torch::nn::Linear fc2_{nullptr};
  torch::nn::Linear fc3_{nullptr};
};

void register_components(orchestrate::Registry& registry) {
  registry.models().add(
      "lenet", "LeNet-5: two 5x5 conv + max-pool stages, dense 120, 84 (ReLU)", orchestrate::ParamSchema{},
      [](const orchestrate::Params&, const ModelInput& input) { return std::make_shared<LeNet5>(input); },
      orchestrate::ModelMeta{"fc3.*", 28, {}, orchestrate::no_preprocessing()});
}

}  // namespace

ORCHESTRATE_PLUGIN("lenet", "1.0.0", register_components)

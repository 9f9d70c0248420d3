// Inception-ResNet-v2 (Szegedy et al., 2016) exactly as timm 1.0 builds it
// (timm.create_model("inception_resnet_v2")), so timm's weights, the ported
// TF-slim ImageNet ones included, load by name: the same module names
// (conv2d_1a.conv, mixed_5b.branch1.0.bn, repeat.9.conv2d, block8, classif),
// parameters and buffers, and the same initialization (PyTorch's defaults:
// timm sets none of its own for this model).
//
// No auxiliary classifier: FastNN's TF-slim original has AuxLogits on the
// 17x17 grid, but timm's layout (the one its weights follow) has none, so
// forward_train returns the main logits only and ModelMeta.aux_logits is empty.
#include <ATen/ATen.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <memory>
#include <string>

#include "inception_resnet_blocks.h"
#include "orchestrate/error.h"
#include "orchestrate/model.h"
#include "orchestrate/model_presets.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace inception_resnet_v2 {
namespace {

using orchestrate::ModelInput;

// The smallest side the network takes, found by running timm's model (74
// fails, 75 works): the stem, mixed_6a and mixed_7a shrink 75 to 1x1.
constexpr std::int64_t kMinimumSide = 75;
constexpr std::int64_t kFeatureWidth = 1536;  // conv2d_7b's channels, timm's num_features

// timm's residual scales per grid size, and its block counts.
constexpr double kBlock35Scale = 0.17, kBlock17Scale = 0.10, kBlock8Scale = 0.20;
constexpr int kBlock35Count = 10, kBlock17Count = 20, kBlock8Count = 9;

// timm's nn.Sequential of identical blocks, named 0, 1, ... like its children.
template <typename MakeBlock>
nn::Sequential repeated(int count, MakeBlock make_block) {
  nn::Sequential blocks;
  for (int i = 0; i < count; ++i) blocks->push_back(make_block());
  return blocks;
}

class InceptionResnetV2 final : public orchestrate::Model {
 public:
  // Registered in timm's order, so construction (PyTorch's default init)
  // consumes the random stream alike. The stem takes the data's channels
  // (timm's in_chans).
  InceptionResnetV2(const ModelInput& input, double drop_rate) {
    conv2d_1a_ = register_module("conv2d_1a", ConvNormAct(conv(input.channels, 32, 3).stride(2)));
    conv2d_2a_ = register_module("conv2d_2a", ConvNormAct(conv(32, 32, 3)));
    conv2d_2b_ = register_module("conv2d_2b", ConvNormAct(conv(32, 64, 3).padding(1)));
    conv2d_3b_ = register_module("conv2d_3b", ConvNormAct(conv(64, 80, 1)));
    conv2d_4a_ = register_module("conv2d_4a", ConvNormAct(conv(80, 192, 3)));
    mixed_5b_ = register_module("mixed_5b", Mixed5b());
    repeat_ = register_module("repeat", repeated(kBlock35Count, [] { return Block35(kBlock35Scale); }));
    mixed_6a_ = register_module("mixed_6a", Mixed6a());
    repeat_1_ = register_module("repeat_1", repeated(kBlock17Count, [] { return Block17(kBlock17Scale); }));
    mixed_7a_ = register_module("mixed_7a", Mixed7a());
    repeat_2_ = register_module("repeat_2", repeated(kBlock8Count, [] { return Block8(kBlock8Scale, /*relu=*/true); }));
    block8_ = register_module("block8", Block8(/*scale=*/1.0, /*relu=*/false));
    conv2d_7b_ = register_module("conv2d_7b", ConvNormAct(conv(2080, kFeatureWidth, 1)));
    head_drop_ = register_module("head_drop", nn::Dropout(drop_rate));
    classif_ = register_module("classif", nn::Linear(kFeatureWidth, input.num_classes));
  }

  at::Tensor forward(const at::Tensor& images) override {
    auto x = conv2d_2b_(conv2d_2a_(conv2d_1a_(images)));
    x = conv2d_4a_(conv2d_3b_(at::max_pool2d(x, 3, /*stride=*/2)));
    x = repeat_->forward(mixed_5b_(at::max_pool2d(x, 3, /*stride=*/2)));
    x = repeat_1_->forward(mixed_6a_(x));
    x = block8_(repeat_2_->forward(mixed_7a_(x)));
    x = conv2d_7b_(x);
    return classif_(head_drop_(at::adaptive_avg_pool2d(x, {1, 1}).flatten(1)));
  }

 private:
  ConvNormAct conv2d_1a_{nullptr}, conv2d_2a_{nullptr}, conv2d_2b_{nullptr}, conv2d_3b_{nullptr},
      conv2d_4a_{nullptr};
  Mixed5b mixed_5b_{nullptr};
  Mixed6a mixed_6a_{nullptr};
  Mixed7a mixed_7a_{nullptr};
  nn::Sequential repeat_{nullptr}, repeat_1_{nullptr}, repeat_2_{nullptr};
  Block8 block8_{nullptr};
  ConvNormAct conv2d_7b_{nullptr};
  nn::Dropout head_drop_{nullptr};
  nn::Linear classif_{nullptr};
};

// Declines what timm's model could not run, before building anything.
void check_input(const ModelInput& input) {
  if (input.height < kMinimumSide || input.width < kMinimumSide)
    throw orchestrate::RecipeError(
        "[model] inception_resnet_v2: a " + std::to_string(input.height) + "x" + std::to_string(input.width) +
        " input is below Inception-ResNet-v2's minimum input of " + std::to_string(kMinimumSide) + "x" +
        std::to_string(kMinimumSide) + " (its stride-2 convs and pools would leave nothing); resize or pad the images");
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("drop_rate", 0.0, "dropout probability before the classifier `classif` (training only), timm's")
          .at_least(0)
          .less_than(1),
  };
  registry.models().add(
      "inception_resnet_v2",
      "Inception-ResNet-v2 as timm builds it (timm weights load by name; 299x299 inputs, at least 75x75)",
      std::move(schema),
      [](const Params& params, const ModelInput& input) {
        check_input(input);
        return std::make_shared<InceptionResnetV2>(input, params.real("drop_rate"));
      },
      // No aux logits: timm's layout has no AuxLogits head (see the top).
      ModelMeta{"classif.*", 299, {}, inception_preprocessing()});
}

}  // namespace
}  // namespace inception_resnet_v2

ORCHESTRATE_PLUGIN("inception_resnet_v2", "1.0.0", inception_resnet_v2::register_components)

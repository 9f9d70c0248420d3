// Inception v3 (Szegedy et al., 2015) exactly as torchvision's Inception3
// builds it, so torchvision state_dicts load by name: the same module names
// (Conv2d_1a_3x3.conv, Mixed_5b.branch1x1.bn, AuxLogits.fc, fc), parameters
// and buffers, the same initialization, and in training the auxiliary
// classifier's logits on Mixed_6e beside the main ones (InceptionOutputs).
#include <ATen/ATen.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "inception_blocks.h"
#include "orchestrate/error.h"
#include "orchestrate/model.h"
#include "orchestrate/model_presets.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace inception_v3 {
namespace {

using orchestrate::ModelInput;

// The smallest side the network takes, found by running torchvision's model
// (74 fails, 75 works): the stem and Mixed_6a/7a shrink 75 to 1x1. The
// auxiliary head needs Mixed_6e at its full 17x17 (5x5/3 average pool, then an
// unpadded 5x5 conv), which only a 299 side gives (298 fails in train mode).
constexpr std::int64_t kMinimumSide = 75;
constexpr std::int64_t kMinimumSideWithAux = 299;
constexpr std::int64_t kFeatureWidth = 2048;

// torch.nn.init.trunc_normal_'s steps (LibTorch's C++ init has none): inverse
// CDF of a uniform draw, so the same seed gives the same numbers as PyTorch.
void trunc_normal_(at::Tensor& tensor, double std, double low, double high) {
  const auto normal_cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  tensor.uniform_(2 * normal_cdf(low / std) - 1, 2 * normal_cdf(high / std) - 1);
  tensor.erfinv_().mul_(std * std::sqrt(2.0)).clamp_(low, high);
}

// torchvision's option for its ported Google weights, which expect pixels in
// [-1, 1]: images normalized with the ImageNet mean and std are mapped back
// to that range, channel by channel, with torchvision's exact arithmetic.
at::Tensor imagenet_to_inception_range(const at::Tensor& images) {
  const double mean[] = {0.485, 0.456, 0.406};
  const double std[] = {0.229, 0.224, 0.225};
  std::vector<at::Tensor> channels;
  for (std::int64_t c = 0; c < 3; ++c)
    channels.push_back(images.select(1, c).unsqueeze(1) * (std[c] / 0.5) + (mean[c] - 0.5) / 0.5);
  return at::cat(channels, 1);
}

class InceptionV3 final : public orchestrate::Model {
 public:
  InceptionV3(const ModelInput& input, bool aux_logits, bool transform_input, double dropout)
      : transform_input_(transform_input) {
    // Registered in torchvision's order (AuxLogits between Mixed_6e and
    // Mixed_7a), so construction and init consume the random stream alike.
    // The stem takes the data's channels; torchvision's is fixed at 3.
    Conv2d_1a_3x3_ = register_module("Conv2d_1a_3x3", BasicConv2d(conv(input.channels, 32, 3).stride(2)));
    Conv2d_2a_3x3_ = register_module("Conv2d_2a_3x3", BasicConv2d(conv(32, 32, 3)));
    Conv2d_2b_3x3_ = register_module("Conv2d_2b_3x3", BasicConv2d(conv(32, 64, 3).padding(1)));
    Conv2d_3b_1x1_ = register_module("Conv2d_3b_1x1", BasicConv2d(conv(64, 80, 1)));
    Conv2d_4a_3x3_ = register_module("Conv2d_4a_3x3", BasicConv2d(conv(80, 192, 3)));
    Mixed_5b_ = register_module("Mixed_5b", InceptionA(192, 32));
    Mixed_5c_ = register_module("Mixed_5c", InceptionA(256, 64));
    Mixed_5d_ = register_module("Mixed_5d", InceptionA(288, 64));
    Mixed_6a_ = register_module("Mixed_6a", InceptionB(288));
    Mixed_6b_ = register_module("Mixed_6b", InceptionC(768, 128));
    Mixed_6c_ = register_module("Mixed_6c", InceptionC(768, 160));
    Mixed_6d_ = register_module("Mixed_6d", InceptionC(768, 160));
    Mixed_6e_ = register_module("Mixed_6e", InceptionC(768, 192));
    if (aux_logits) AuxLogits_ = register_module("AuxLogits", InceptionAux(768, input.num_classes));
    Mixed_7a_ = register_module("Mixed_7a", InceptionD(768));
    Mixed_7b_ = register_module("Mixed_7b", InceptionE(1280));
    Mixed_7c_ = register_module("Mixed_7c", InceptionE(kFeatureWidth));
    dropout_ = register_module("dropout", nn::Dropout(dropout));
    fc_ = register_module("fc", nn::Linear(kFeatureWidth, input.num_classes));
    initialise_like_torchvision();
  }

  at::Tensor forward(const at::Tensor& images) override { return run(images, /*with_aux=*/false).logits; }

  // The aux head runs only in train mode, as in torchvision.
  orchestrate::ModelOutput forward_train(const at::Tensor& images) override {
    return run(images, /*with_aux=*/!AuxLogits_.is_empty() && is_training());
  }

 private:
  orchestrate::ModelOutput run(const at::Tensor& images, bool with_aux) {
    auto x = transform_input_ ? imagenet_to_inception_range(images) : images;
    x = Conv2d_2b_3x3_(Conv2d_2a_3x3_(Conv2d_1a_3x3_(x)));
    x = Conv2d_4a_3x3_(Conv2d_3b_1x1_(at::max_pool2d(x, 3, /*stride=*/2)));
    x = Mixed_5d_(Mixed_5c_(Mixed_5b_(at::max_pool2d(x, 3, /*stride=*/2))));
    x = Mixed_6e_(Mixed_6d_(Mixed_6c_(Mixed_6b_(Mixed_6a_(x)))));
    orchestrate::ModelOutput output;
    if (with_aux) output.aux_logits.emplace("aux", AuxLogits_(x));
    x = Mixed_7c_(Mixed_7b_(Mixed_7a_(x)));
    output.logits = fc_(dropout_(at::adaptive_avg_pool2d(x, {1, 1})).flatten(1));
    return output;
  }

  // torchvision's init_weights: every conv and linear weight from a normal
  // truncated to [-2, 2] with std 0.1, except the modules carrying a `stddev`
  // attribute. Only AuxLogits.fc (0.001) takes effect: torchvision sets
  // AuxLogits.conv1.stddev = 0.01 on the BasicConv2d, not on its nn.Conv2d,
  // so its init loop never sees it and that conv gets 0.1 like the rest.
  // Batch norms: scale 1, shift 0; linear biases keep PyTorch's default.
  void initialise_like_torchvision() {
    at::NoGradGuard no_grad;
    for (const auto& item : named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
      const double stddev = item.key() == "AuxLogits.fc" ? 0.001 : 0.1;
      if (auto* conv = item.value()->as<nn::Conv2d>()) {
        trunc_normal_(conv->weight, stddev, -2, 2);
      } else if (auto* linear = item.value()->as<nn::Linear>()) {
        trunc_normal_(linear->weight, stddev, -2, 2);
      } else if (auto* norm = item.value()->as<nn::BatchNorm2d>()) {
        norm->weight.fill_(1);
        norm->bias.fill_(0);
      }
    }
  }

  bool transform_input_;
  BasicConv2d Conv2d_1a_3x3_{nullptr}, Conv2d_2a_3x3_{nullptr}, Conv2d_2b_3x3_{nullptr}, Conv2d_3b_1x1_{nullptr},
      Conv2d_4a_3x3_{nullptr};
  InceptionA Mixed_5b_{nullptr}, Mixed_5c_{nullptr}, Mixed_5d_{nullptr};
  InceptionB Mixed_6a_{nullptr};
  InceptionC Mixed_6b_{nullptr}, Mixed_6c_{nullptr}, Mixed_6d_{nullptr}, Mixed_6e_{nullptr};
  InceptionAux AuxLogits_{nullptr};  // empty when aux_logits = false
  InceptionD Mixed_7a_{nullptr};
  InceptionE Mixed_7b_{nullptr}, Mixed_7c_{nullptr};
  nn::Dropout dropout_{nullptr};
  nn::Linear fc_{nullptr};
};

// Declines what torchvision's model could not run, before building anything.
void check_input(const ModelInput& input, bool aux_logits, bool transform_input) {
  using orchestrate::RecipeError;
  const std::int64_t minimum = aux_logits ? kMinimumSideWithAux : kMinimumSide;
  if (input.height < minimum || input.width < minimum)
    throw RecipeError("[model] inception_v3: a " + std::to_string(input.height) + "x" + std::to_string(input.width) +
                      " input is below Inception v3's minimum input of " + std::to_string(minimum) + "x" +
                      std::to_string(minimum) +
                      (aux_logits ? " with aux_logits = true (its auxiliary head needs Mixed_6e's full 17x17 grid); "
                                    "set aux_logits = false for inputs down to " +
                                        std::to_string(kMinimumSide) + "x" + std::to_string(kMinimumSide) +
                                        ", or resize the images"
                                  : " (its stride-2 convs and pools would leave nothing); resize or pad the images"));
  if (transform_input && input.channels != 3)
    throw RecipeError("[model] inception_v3: transform_input re-normalizes the 3 ImageNet RGB channels, but the data "
                      "has " + std::to_string(input.channels));
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      bool_param("aux_logits", true,
                 "the auxiliary classifier on Mixed_6e (AuxLogits), trained beside the main one with the [loss] aux "
                 "weight (0.4 by default); it needs 299x299 inputs, without it 75x75 is enough"),
      bool_param("transform_input", false,
                 "images arrive normalized with the ImageNet mean and std (the imagenet preprocessing) and the model "
                 "maps them to [-1, 1], the range its Google-trained weights expect (torchvision's option)"),
      real_param("dropout", 0.5, "dropout probability before the final fully connected layer (training only)")
          .at_least(0)
          .less_than(1),
  };
  registry.models().add(
      "inception_v3", "Inception v3 as torchvision builds it, with its auxiliary classifier (299x299 inputs)",
      std::move(schema),
      [](const Params& params, const ModelInput& input) {
        const bool aux_logits = params.boolean("aux_logits");
        const bool transform_input = params.boolean("transform_input");
        check_input(input, aux_logits, transform_input);
        return std::make_shared<InceptionV3>(input, aux_logits, transform_input, params.real("dropout"));
      },
      // "*fc.*" is both heads, fc and AuxLogits.fc; no other name holds "fc.".
      ModelMeta{"*fc.*", 299, {{"aux", 0.4}}, inception_preprocessing()});
}

}  // namespace
}  // namespace inception_v3

ORCHESTRATE_PLUGIN("inception_v3", "1.0.0", inception_v3::register_components)

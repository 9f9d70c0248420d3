// VGG (Simonyan & Zisserman, 2014, "Very Deep Convolutional Networks for
// Large-Scale Image Recognition") exactly as torchvision builds it, so
// torchvision state_dicts load by name: `features.N` numbered as torchvision's
// nn.Sequential numbers them (conv, [batch norm,] ReLU, and max pools),
// adaptive average pooling to 7x7, `classifier.0/3/6`, same initialization.
#include <ATen/ATen.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/model.h"
#include "orchestrate/model_presets.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

namespace nn = torch::nn;
using orchestrate::ModelInput;

constexpr std::int64_t kMaxPool = 0;  // marks a 2x2 max pool in a layer list
constexpr std::int64_t kPoolCount = 5;
// Each of the five max pools halves the side (rounding down), so a side under
// 2^5 reaches 0 before the classifier; torchvision has the same limit.
constexpr std::int64_t kMinimumSide = std::int64_t{1} << kPoolCount;
constexpr std::int64_t kPooledSide = 7;
constexpr std::int64_t kLastWidth = 512;
constexpr std::int64_t kHiddenUnits = 4096;

// torchvision's configurations A, B, D, E: conv widths (3x3, padded) and pools.
std::optional<std::vector<std::int64_t>> layers_of(std::int64_t depth) {
  const std::int64_t M = kMaxPool;
  switch (depth) {
    case 11: return std::vector<std::int64_t>{64, M, 128, M, 256, 256, M, 512, 512, M, 512, 512, M};
    case 13: return std::vector<std::int64_t>{64, 64, M, 128, 128, M, 256, 256, M, 512, 512, M, 512, 512, M};
    case 16:
      return std::vector<std::int64_t>{64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M, 512, 512, 512, M};
    case 19:
      return std::vector<std::int64_t>{64,  64,  M,   128, 128, M,   256, 256, 256, 256, M,
                                       512, 512, 512, 512, M,   512, 512, 512, 512, M};
    default: return std::nullopt;
  }
}

std::string unsupported_depth(std::int64_t depth) {
  return "depth: " + std::to_string(depth) + " is not a VGG; use 11, 13, 16 or 19";
}

class Vgg final : public orchestrate::Model {
 public:
  Vgg(const std::vector<std::int64_t>& layers, bool batch_norm, double dropout, const ModelInput& input) {
    if (input.height < kMinimumSide || input.width < kMinimumSide)
      throw orchestrate::RecipeError(
          "[model] vgg: a " + std::to_string(input.height) + "x" + std::to_string(input.width) +
          " input is below VGG's minimum input of " + std::to_string(kMinimumSide) + "x" +
          std::to_string(kMinimumSide) + " (its five 2x2 max pools would leave nothing); resize or pad the images, "
          "or use resnet_v1");
    nn::Sequential features;
    std::int64_t channels = input.channels;  // torchvision's is fixed at 3
    for (const std::int64_t width : layers) {
      if (width == kMaxPool) {
        features->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)));
        continue;
      }
      features->push_back(nn::Conv2d(nn::Conv2dOptions(channels, width, 3).padding(1)));
      if (batch_norm) features->push_back(nn::BatchNorm2d(width));
      features->push_back(nn::ReLU(nn::ReLUOptions(/*inplace=*/true)));
      channels = width;
    }
    features_ = register_module("features", features);
    classifier_ = register_module(
        "classifier",
        nn::Sequential(nn::Linear(kLastWidth * kPooledSide * kPooledSide, kHiddenUnits),
                       nn::ReLU(nn::ReLUOptions(true)), nn::Dropout(dropout), nn::Linear(kHiddenUnits, kHiddenUnits),
                       nn::ReLU(nn::ReLUOptions(true)), nn::Dropout(dropout),
                       nn::Linear(kHiddenUnits, input.num_classes)));
    initialise_like_torchvision();
  }

  at::Tensor forward(const at::Tensor& images) override {
    const auto pooled = at::adaptive_avg_pool2d(features_->forward(images), {kPooledSide, kPooledSide});
    return classifier_->forward(pooled.flatten(1));
  }

 private:
  // Kaiming-normal (fan_out, ReLU) convs, unit-scale batch norms, N(0, 0.01)
  // linear layers, all biases zero.
  void initialise_like_torchvision() {
    at::NoGradGuard no_grad;
    for (const auto& module : modules(/*include_self=*/false)) {
      if (auto* conv = module->as<nn::Conv2d>()) {
        nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
        nn::init::zeros_(conv->bias);
      } else if (auto* norm = module->as<nn::BatchNorm2d>()) {
        nn::init::ones_(norm->weight);
        nn::init::zeros_(norm->bias);
      } else if (auto* linear = module->as<nn::Linear>()) {
        nn::init::normal_(linear->weight, 0.0, 0.01);
        nn::init::zeros_(linear->bias);
      }
    }
  }

  nn::Sequential features_{nullptr};
  nn::Sequential classifier_{nullptr};
};

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      int_param("depth", 16, "number of weighted layers: 11, 13, 16 or 19 (configurations A, B, D, E)"),
      bool_param("batch_norm", false, "batch norm after every conv (torchvision's vgg16_bn and friends)"),
      real_param("dropout", 0.5, "dropout probability after each of the two hidden 4096-unit dense layers (training only)")
          .at_least(0)
          .less_than(1),
  };
  schema.rule([](const Params& params) {
    const std::int64_t depth = params.integer("depth");
    return layers_of(depth) ? std::string() : unsupported_depth(depth);
  });
  registry.models().add(
      "vgg", "VGG-11/13/16/19, optionally with batch norm, as torchvision builds it (inputs of at least 32x32)",
      std::move(schema),
      [](const Params& params, const ModelInput& input) {
        const std::int64_t depth = params.integer("depth");
        const auto layers = layers_of(depth);
        if (!layers) throw RecipeError("[model] vgg: " + unsupported_depth(depth));
        return std::make_shared<Vgg>(*layers, params.boolean("batch_norm"), params.real("dropout"), input);
      },
      ModelMeta{"classifier.6.*", 224, {}, imagenet_preprocessing()});
}

}  // namespace

ORCHESTRATE_PLUGIN("vgg", "1.0.0", register_components)

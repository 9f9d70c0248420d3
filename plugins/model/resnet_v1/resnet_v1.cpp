// ResNet (He et al., 2015, "Deep Residual Learning for Image Recognition")
// exactly as torchvision builds it, so torchvision state_dicts load by name:
// same module names (conv1, bn1, layer1.0.conv1, layer1.0.downsample.0, fc),
// same parameters and buffers, same initialization.
//
// The Bottleneck puts its stride on the 3x3 conv, as torchvision does (the
// variant often called "ResNet v1.5"; NVIDIA measures about 0.5 % more
// ImageNet top-1 for it); the original paper and TF-slim's resnet_v1 put it
// on the first 1x1 conv.
#include <ATen/ATen.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/fused_ops/batch_norm_relu.h"
#include "orchestrate/model.h"
#include "orchestrate/model_presets.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

namespace nn = torch::nn;
using orchestrate::ModelInput;
using orchestrate::fused_ops::batch_norm_relu;
using orchestrate::fused_ops::NormFusion;

constexpr std::int64_t kStemWidth = 64;
constexpr std::int64_t kStageCount = 4;

nn::Conv2d conv3x3(std::int64_t in, std::int64_t out, std::int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

nn::Conv2d conv1x1(std::int64_t in, std::int64_t out, std::int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false));
}

// A residual block: its layers plus, when the shape changes, a projection of
// the shortcut (1x1 conv and batch norm) named "downsample" as in torchvision.
class ResidualBlock : public nn::Module {
 public:
  explicit ResidualBlock(NormFusion fusion) : fusion_(fusion) {}
  virtual at::Tensor forward(const at::Tensor& x) = 0;
  // torchvision's zero_init_residual: the block starts as the identity.
  virtual void zero_init_last_norm() = 0;

 protected:
  // Registered after the block's own layers, keeping torchvision's order.
  void add_shortcut_projection(std::int64_t in, std::int64_t out, std::int64_t stride) {
    if (stride != 1 || in != out)
      downsample_ = register_module("downsample", nn::Sequential(conv1x1(in, out, stride), nn::BatchNorm2d(out)));
  }
  at::Tensor shortcut(const at::Tensor& x) { return downsample_ ? downsample_->forward(x) : x; }
  // relu(norm(x) [+ residual]), fused by cuDNN when the run asks and it applies.
  at::Tensor norm_relu(nn::BatchNorm2d& norm, const at::Tensor& x, const at::Tensor& residual = {}) {
    return batch_norm_relu(*norm, x, residual, fusion_);
  }

 private:
  NormFusion fusion_;
  nn::Sequential downsample_{nullptr};
};

// Two 3x3 convs (ResNet-18/34).
class BasicBlock final : public ResidualBlock {
 public:
  static constexpr std::int64_t kExpansion = 1;

  BasicBlock(std::int64_t in, std::int64_t planes, std::int64_t stride, NormFusion fusion)
      : ResidualBlock(fusion),
        conv1_(register_module("conv1", conv3x3(in, planes, stride))),
        bn1_(register_module("bn1", nn::BatchNorm2d(planes))),
        conv2_(register_module("conv2", conv3x3(planes, planes, 1))),
        bn2_(register_module("bn2", nn::BatchNorm2d(planes))) {
    add_shortcut_projection(in, planes * kExpansion, stride);
  }

  at::Tensor forward(const at::Tensor& x) override {
    const auto out = norm_relu(bn1_, conv1_->forward(x));
    return norm_relu(bn2_, conv2_->forward(out), shortcut(x));
  }

  void zero_init_last_norm() override { torch::nn::init::zeros_(bn2_->weight); }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
};

// 1x1 reduce, 3x3 (strided), 1x1 expand by 4 (ResNet-50/101/152).
class Bottleneck final : public ResidualBlock {
 public:
  static constexpr std::int64_t kExpansion = 4;

  Bottleneck(std::int64_t in, std::int64_t planes, std::int64_t stride, NormFusion fusion)
      : ResidualBlock(fusion),
        conv1_(register_module("conv1", conv1x1(in, planes, 1))),
        bn1_(register_module("bn1", nn::BatchNorm2d(planes))),
        conv2_(register_module("conv2", conv3x3(planes, planes, stride))),
        bn2_(register_module("bn2", nn::BatchNorm2d(planes))),
        conv3_(register_module("conv3", conv1x1(planes, planes * kExpansion, 1))),
        bn3_(register_module("bn3", nn::BatchNorm2d(planes * kExpansion))) {
    add_shortcut_projection(in, planes * kExpansion, stride);
  }

  at::Tensor forward(const at::Tensor& x) override {
    auto out = norm_relu(bn1_, conv1_->forward(x));
    out = norm_relu(bn2_, conv2_->forward(out));
    return norm_relu(bn3_, conv3_->forward(out), shortcut(x));
  }

  void zero_init_last_norm() override { torch::nn::init::zeros_(bn3_->weight); }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
  nn::Conv2d conv3_;
  nn::BatchNorm2d bn3_;
};

struct Architecture {
  bool bottleneck;
  std::array<std::int64_t, kStageCount> blocks_per_stage;
};

// torchvision's resnet18 ... resnet152.
std::optional<Architecture> architecture_of(std::int64_t depth) {
  switch (depth) {
    case 18: return Architecture{false, {2, 2, 2, 2}};
    case 34: return Architecture{false, {3, 4, 6, 3}};
    case 50: return Architecture{true, {3, 4, 6, 3}};
    case 101: return Architecture{true, {3, 4, 23, 3}};
    case 152: return Architecture{true, {3, 8, 36, 3}};
    default: return std::nullopt;
  }
}

std::string unsupported_depth(std::int64_t depth) {
  return "depth: " + std::to_string(depth) + " is not a ResNet; use 18, 34, 50, 101 or 152";
}

class ResNetV1 final : public orchestrate::Model {
 public:
  ResNetV1(const Architecture& architecture, bool zero_init_residual, NormFusion fusion, const ModelInput& input)
      : fusion_(fusion) {
    // The stem takes the data's channels (1 for Fashion-MNIST); torchvision's is fixed at 3.
    conv1_ = register_module(
        "conv1", nn::Conv2d(nn::Conv2dOptions(input.channels, kStemWidth, 7).stride(2).padding(3).bias(false)));
    bn1_ = register_module("bn1", nn::BatchNorm2d(kStemWidth));
    std::int64_t channels = kStemWidth;
    for (std::int64_t stage = 0; stage < kStageCount; ++stage) {
      const std::int64_t planes = kStemWidth << stage;
      nn::ModuleList stage_blocks;
      for (std::int64_t index = 0; index < architecture.blocks_per_stage[stage]; ++index) {
        const std::int64_t stride = (index == 0 && stage > 0) ? 2 : 1;
        std::shared_ptr<ResidualBlock> block;
        if (architecture.bottleneck) {
          block = std::make_shared<Bottleneck>(channels, planes, stride, fusion);
          channels = planes * Bottleneck::kExpansion;
        } else {
          block = std::make_shared<BasicBlock>(channels, planes, stride, fusion);
          channels = planes * BasicBlock::kExpansion;
        }
        stage_blocks->push_back(block);
        blocks_.push_back(block);
      }
      register_module("layer" + std::to_string(stage + 1), stage_blocks);
    }
    fc_ = register_module("fc", nn::Linear(channels, input.num_classes));
    initialise_like_torchvision(zero_init_residual);
  }

  // Adaptive average pooling makes the head independent of the input size:
  // 28x28 reaches layer4 as 1x1 (28 -> 14 -> 7 -> 4 -> 2 -> 1), 224x224 as 7x7.
  at::Tensor forward(const at::Tensor& images) override {
    auto x = batch_norm_relu(*bn1_, conv1_->forward(images), at::Tensor(), fusion_);
    x = at::max_pool2d(x, /*kernel_size=*/3, /*stride=*/2, /*padding=*/1);
    for (const auto& block : blocks_) x = block->forward(x);
    return fc_->forward(at::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }

 private:
  // Kaiming-normal (fan_out, ReLU) convs, unit-scale zero-shift batch norms;
  // fc keeps LibTorch's Linear default, which is PyTorch's.
  void initialise_like_torchvision(bool zero_init_residual) {
    at::NoGradGuard no_grad;
    for (const auto& module : modules(/*include_self=*/false)) {
      if (auto* conv = module->as<nn::Conv2d>()) {
        nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      } else if (auto* norm = module->as<nn::BatchNorm2d>()) {
        nn::init::ones_(norm->weight);
        nn::init::zeros_(norm->bias);
      }
    }
    if (zero_init_residual)
      for (const auto& block : blocks_) block->zero_init_last_norm();
  }

  NormFusion fusion_;
  nn::Conv2d conv1_{nullptr};
  nn::BatchNorm2d bn1_{nullptr};
  std::vector<std::shared_ptr<ResidualBlock>> blocks_;  // layer1.0 ... layer4.N, in order
  nn::Linear fc_{nullptr};
};

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      int_param("depth", 50, "number of weighted layers: 18 or 34 (basic blocks), 50, 101 or 152 (bottlenecks)"),
      bool_param("zero_init_residual", false,
                 "start each block's last batch-norm scale at 0, so every residual block begins as the identity "
                 "(torchvision's option; Goyal et al. 2017 use it for large-batch training)"),
      bool_param("fuse_norm_relu", false,
                 "run each batch norm with its ReLU (and a block's residual add) as one cuDNN kernel, forward and "
                 "backward, where cuDNN fuses them: CUDA, fp16, channels_last, training; elsewhere it changes "
                 "nothing"),
  };
  schema.rule([](const Params& params) {
    const std::int64_t depth = params.integer("depth");
    return architecture_of(depth) ? std::string() : unsupported_depth(depth);
  });
  registry.models().add(
      "resnet_v1", "ResNet-18/34/50/101/152 as torchvision builds it (stride on the 3x3 conv, v1.5)",
      std::move(schema),
      [](const Params& params, const ModelInput& input) {
        const std::int64_t depth = params.integer("depth");
        const auto architecture = architecture_of(depth);
        if (!architecture) throw RecipeError("[model] resnet_v1: " + unsupported_depth(depth));
        const NormFusion fusion = params.boolean("fuse_norm_relu") ? NormFusion::cudnn : NormFusion::off;
        return std::make_shared<ResNetV1>(*architecture, params.boolean("zero_init_residual"), fusion, input);
      },
      ModelMeta{"fc.*", 224, {}, imagenet_preprocessing()});
}

}  // namespace

ORCHESTRATE_PLUGIN("resnet_v1", "1.0.0", register_components)

// The building blocks of Inception-ResNet-v2 (Szegedy et al., 2016,
// "Inception-v4, Inception-ResNet and the Impact of Residual Connections on
// Learning") exactly as timm 1.0's inception_resnet_v2.py builds them: the
// same submodule names (branch0, branch1.0, conv2d), widths, kernels and
// paddings, constructed in the same order (so a seed draws the same numbers).
// Multi-layer branches are nn::Sequential, as in timm, so their layers are
// named by index (branch1.0.conv.weight), pooling layers included. They are
// built with braces, nn::Sequential{a, b}: a braced list evaluates a, b left
// to right, where a call's arguments have no order (GCC builds b first), and
// the init must draw in timm's order.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "../common/conv_norm_relu.h"

namespace inception_resnet_v2 {

namespace nn = torch::nn;

// The ConvNormAct unit (plugins/model/common/conv_norm_relu.h), by timm's name.
using ConvNormAct = model_blocks::ConvNormRelu;
using model_blocks::conv;

inline nn::MaxPool2d max_pool_3x3_stride_2() { return nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)); }

// 35x35 grid, 192 -> 320 channels: the stem's last block, without a residual.
// Its average pool leaves the padding out of the mean (count_include_pad=False).
class Mixed5bImpl : public nn::Module {
 public:
  Mixed5bImpl()
      : branch0_(register_module("branch0", ConvNormAct(conv(192, 96, 1)))),
        branch1_(register_module("branch1", nn::Sequential{ConvNormAct(conv(192, 48, 1)),
                                                            ConvNormAct(conv(48, 64, 5).padding(2))})),
        branch2_(register_module("branch2", nn::Sequential{ConvNormAct(conv(192, 64, 1)),
                                                            ConvNormAct(conv(64, 96, 3).padding(1)),
                                                            ConvNormAct(conv(96, 96, 3).padding(1))})),
        branch3_(register_module(
            "branch3",
            nn::Sequential{nn::AvgPool2d(nn::AvgPool2dOptions(3).stride(1).padding(1).count_include_pad(false)),
                           ConvNormAct(conv(192, 64, 1))})) {}

  at::Tensor forward(const at::Tensor& x) {
    return at::cat({branch0_(x), branch1_->forward(x), branch2_->forward(x), branch3_->forward(x)}, 1);
  }

 private:
  ConvNormAct branch0_;
  nn::Sequential branch1_, branch2_, branch3_;
};
TORCH_MODULE(Mixed5b);

// 35x35 residual block (Inception-ResNet-A, repeated 10 times at scale 0.17):
// the branches' concatenation, projected back to 320 channels by a 1x1 conv
// with bias, is scaled down before it is added, which keeps training stable.
class Block35Impl : public nn::Module {
 public:
  explicit Block35Impl(double scale)
      : scale_(scale),
        branch0_(register_module("branch0", ConvNormAct(conv(320, 32, 1)))),
        branch1_(register_module("branch1", nn::Sequential{ConvNormAct(conv(320, 32, 1)),
                                                            ConvNormAct(conv(32, 32, 3).padding(1))})),
        branch2_(register_module("branch2", nn::Sequential{ConvNormAct(conv(320, 32, 1)),
                                                            ConvNormAct(conv(32, 48, 3).padding(1)),
                                                            ConvNormAct(conv(48, 64, 3).padding(1))})),
        conv2d_(register_module("conv2d", nn::Conv2d(conv(128, 320, 1)))) {}

  at::Tensor forward(const at::Tensor& x) {
    const auto mixed = at::cat({branch0_(x), branch1_->forward(x), branch2_->forward(x)}, 1);
    return (conv2d_(mixed) * scale_ + x).relu_();
  }

 private:
  double scale_;
  ConvNormAct branch0_;
  nn::Sequential branch1_, branch2_;
  nn::Conv2d conv2d_;
};
TORCH_MODULE(Block35);

// 35x35 -> 17x17 grid reduction (Reduction-A), 320 -> 1088 channels.
class Mixed6aImpl : public nn::Module {
 public:
  Mixed6aImpl()
      : branch0_(register_module("branch0", ConvNormAct(conv(320, 384, 3).stride(2)))),
        branch1_(register_module("branch1", nn::Sequential{ConvNormAct(conv(320, 256, 1)),
                                                            ConvNormAct(conv(256, 256, 3).padding(1)),
                                                            ConvNormAct(conv(256, 384, 3).stride(2))})),
        branch2_(register_module("branch2", max_pool_3x3_stride_2())) {}

  at::Tensor forward(const at::Tensor& x) { return at::cat({branch0_(x), branch1_->forward(x), branch2_(x)}, 1); }

 private:
  ConvNormAct branch0_;
  nn::Sequential branch1_;
  nn::MaxPool2d branch2_;
};
TORCH_MODULE(Mixed6a);

// 17x17 residual block (Inception-ResNet-B, 20 times at scale 0.1), its 7x7
// conv factorized into 1x7 and 7x1.
class Block17Impl : public nn::Module {
 public:
  explicit Block17Impl(double scale)
      : scale_(scale),
        branch0_(register_module("branch0", ConvNormAct(conv(1088, 192, 1)))),
        branch1_(register_module("branch1", nn::Sequential{ConvNormAct(conv(1088, 128, 1)),
                                                            ConvNormAct(conv(128, 160, {1, 7}).padding({0, 3})),
                                                            ConvNormAct(conv(160, 192, {7, 1}).padding({3, 0}))})),
        conv2d_(register_module("conv2d", nn::Conv2d(conv(384, 1088, 1)))) {}

  at::Tensor forward(const at::Tensor& x) {
    const auto mixed = at::cat({branch0_(x), branch1_->forward(x)}, 1);
    return (conv2d_(mixed) * scale_ + x).relu_();
  }

 private:
  double scale_;
  ConvNormAct branch0_;
  nn::Sequential branch1_;
  nn::Conv2d conv2d_;
};
TORCH_MODULE(Block17);

// 17x17 -> 8x8 grid reduction (Reduction-B), 1088 -> 2080 channels.
class Mixed7aImpl : public nn::Module {
 public:
  Mixed7aImpl()
      : branch0_(register_module("branch0", nn::Sequential{ConvNormAct(conv(1088, 256, 1)),
                                                            ConvNormAct(conv(256, 384, 3).stride(2))})),
        branch1_(register_module("branch1", nn::Sequential{ConvNormAct(conv(1088, 256, 1)),
                                                            ConvNormAct(conv(256, 288, 3).stride(2))})),
        branch2_(register_module("branch2", nn::Sequential{ConvNormAct(conv(1088, 256, 1)),
                                                            ConvNormAct(conv(256, 288, 3).padding(1)),
                                                            ConvNormAct(conv(288, 320, 3).stride(2))})),
        branch3_(register_module("branch3", max_pool_3x3_stride_2())) {}

  at::Tensor forward(const at::Tensor& x) {
    return at::cat({branch0_->forward(x), branch1_->forward(x), branch2_->forward(x), branch3_(x)}, 1);
  }

 private:
  nn::Sequential branch0_, branch1_, branch2_;
  nn::MaxPool2d branch3_;
};
TORCH_MODULE(Mixed7a);

// 8x8 residual block (Inception-ResNet-C, 9 times at scale 0.2), its 3x3 conv
// factorized into 1x3 and 3x1. The last one (timm's `block8`) has scale 1 and
// no ReLU, so conv2d_7b sees the raw residual sum.
class Block8Impl : public nn::Module {
 public:
  Block8Impl(double scale, bool relu)
      : scale_(scale),
        relu_(relu),
        branch0_(register_module("branch0", ConvNormAct(conv(2080, 192, 1)))),
        branch1_(register_module("branch1", nn::Sequential{ConvNormAct(conv(2080, 192, 1)),
                                                            ConvNormAct(conv(192, 224, {1, 3}).padding({0, 1})),
                                                            ConvNormAct(conv(224, 256, {3, 1}).padding({1, 0}))})),
        conv2d_(register_module("conv2d", nn::Conv2d(conv(448, 2080, 1)))) {}

  at::Tensor forward(const at::Tensor& x) {
    const auto mixed = at::cat({branch0_(x), branch1_->forward(x)}, 1);
    auto out = conv2d_(mixed) * scale_ + x;
    return relu_ ? out.relu_() : out;
  }

 private:
  double scale_;
  bool relu_;
  ConvNormAct branch0_;
  nn::Sequential branch1_;
  nn::Conv2d conv2d_;
};
TORCH_MODULE(Block8);

}  // namespace inception_resnet_v2

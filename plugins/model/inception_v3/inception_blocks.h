// The building blocks of Inception v3 (Szegedy et al., 2015, "Rethinking the
// Inception Architecture for Computer Vision") exactly as torchvision's
// inception.py builds them: the same submodule names, widths, kernels and
// paddings, constructed in the same order (so a seed draws the same numbers).
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "../common/conv_norm_relu.h"

namespace inception_v3 {

namespace nn = torch::nn;

// The BasicConv2d unit (plugins/model/common/conv_norm_relu.h), by torchvision's name.
using BasicConv2d = model_blocks::ConvNormRelu;
using model_blocks::conv;

// 35x35 grid: 1x1, 5x5, double 3x3 and pooled branches (Mixed_5b/c/d).
class InceptionAImpl : public nn::Module {
 public:
  InceptionAImpl(std::int64_t in, std::int64_t pool_features)
      : branch1x1_(register_module("branch1x1", BasicConv2d(conv(in, 64, 1)))),
        branch5x5_1_(register_module("branch5x5_1", BasicConv2d(conv(in, 48, 1)))),
        branch5x5_2_(register_module("branch5x5_2", BasicConv2d(conv(48, 64, 5).padding(2)))),
        branch3x3dbl_1_(register_module("branch3x3dbl_1", BasicConv2d(conv(in, 64, 1)))),
        branch3x3dbl_2_(register_module("branch3x3dbl_2", BasicConv2d(conv(64, 96, 3).padding(1)))),
        branch3x3dbl_3_(register_module("branch3x3dbl_3", BasicConv2d(conv(96, 96, 3).padding(1)))),
        branch_pool_(register_module("branch_pool", BasicConv2d(conv(in, pool_features, 1)))) {}

  at::Tensor forward(const at::Tensor& x) {
    return at::cat({branch1x1_(x), branch5x5_2_(branch5x5_1_(x)), branch3x3dbl_3_(branch3x3dbl_2_(branch3x3dbl_1_(x))),
                    branch_pool_(at::avg_pool2d(x, 3, /*stride=*/1, /*padding=*/1))},
                   1);
  }

 private:
  BasicConv2d branch1x1_, branch5x5_1_, branch5x5_2_, branch3x3dbl_1_, branch3x3dbl_2_, branch3x3dbl_3_, branch_pool_;
};
TORCH_MODULE(InceptionA);

// 35x35 -> 17x17 grid reduction (Mixed_6a): strided convs beside a max pool.
class InceptionBImpl : public nn::Module {
 public:
  explicit InceptionBImpl(std::int64_t in)
      : branch3x3_(register_module("branch3x3", BasicConv2d(conv(in, 384, 3).stride(2)))),
        branch3x3dbl_1_(register_module("branch3x3dbl_1", BasicConv2d(conv(in, 64, 1)))),
        branch3x3dbl_2_(register_module("branch3x3dbl_2", BasicConv2d(conv(64, 96, 3).padding(1)))),
        branch3x3dbl_3_(register_module("branch3x3dbl_3", BasicConv2d(conv(96, 96, 3).stride(2)))) {}

  at::Tensor forward(const at::Tensor& x) {
    return at::cat({branch3x3_(x), branch3x3dbl_3_(branch3x3dbl_2_(branch3x3dbl_1_(x))),
                    at::max_pool2d(x, 3, /*stride=*/2)},
                   1);
  }

 private:
  BasicConv2d branch3x3_, branch3x3dbl_1_, branch3x3dbl_2_, branch3x3dbl_3_;
};
TORCH_MODULE(InceptionB);

// 17x17 grid: 7x7 convs factorized into 1x7 and 7x1 (Mixed_6b..e).
class InceptionCImpl : public nn::Module {
 public:
  InceptionCImpl(std::int64_t in, std::int64_t c7)
      : branch1x1_(register_module("branch1x1", BasicConv2d(conv(in, 192, 1)))),
        branch7x7_1_(register_module("branch7x7_1", BasicConv2d(conv(in, c7, 1)))),
        branch7x7_2_(register_module("branch7x7_2", BasicConv2d(conv(c7, c7, {1, 7}).padding({0, 3})))),
        branch7x7_3_(register_module("branch7x7_3", BasicConv2d(conv(c7, 192, {7, 1}).padding({3, 0})))),
        branch7x7dbl_1_(register_module("branch7x7dbl_1", BasicConv2d(conv(in, c7, 1)))),
        branch7x7dbl_2_(register_module("branch7x7dbl_2", BasicConv2d(conv(c7, c7, {7, 1}).padding({3, 0})))),
        branch7x7dbl_3_(register_module("branch7x7dbl_3", BasicConv2d(conv(c7, c7, {1, 7}).padding({0, 3})))),
        branch7x7dbl_4_(register_module("branch7x7dbl_4", BasicConv2d(conv(c7, c7, {7, 1}).padding({3, 0})))),
        branch7x7dbl_5_(register_module("branch7x7dbl_5", BasicConv2d(conv(c7, 192, {1, 7}).padding({0, 3})))),
        branch_pool_(register_module("branch_pool", BasicConv2d(conv(in, 192, 1)))) {}

  at::Tensor forward(const at::Tensor& x) {
    const auto branch7x7 = branch7x7_3_(branch7x7_2_(branch7x7_1_(x)));
    const auto branch7x7dbl =
        branch7x7dbl_5_(branch7x7dbl_4_(branch7x7dbl_3_(branch7x7dbl_2_(branch7x7dbl_1_(x)))));
    return at::cat({branch1x1_(x), branch7x7, branch7x7dbl, branch_pool_(at::avg_pool2d(x, 3, 1, 1))}, 1);
  }

 private:
  BasicConv2d branch1x1_, branch7x7_1_, branch7x7_2_, branch7x7_3_, branch7x7dbl_1_, branch7x7dbl_2_,
      branch7x7dbl_3_, branch7x7dbl_4_, branch7x7dbl_5_, branch_pool_;
};
TORCH_MODULE(InceptionC);

// 17x17 -> 8x8 grid reduction (Mixed_7a).
class InceptionDImpl : public nn::Module {
 public:
  explicit InceptionDImpl(std::int64_t in)
      : branch3x3_1_(register_module("branch3x3_1", BasicConv2d(conv(in, 192, 1)))),
        branch3x3_2_(register_module("branch3x3_2", BasicConv2d(conv(192, 320, 3).stride(2)))),
        branch7x7x3_1_(register_module("branch7x7x3_1", BasicConv2d(conv(in, 192, 1)))),
        branch7x7x3_2_(register_module("branch7x7x3_2", BasicConv2d(conv(192, 192, {1, 7}).padding({0, 3})))),
        branch7x7x3_3_(register_module("branch7x7x3_3", BasicConv2d(conv(192, 192, {7, 1}).padding({3, 0})))),
        branch7x7x3_4_(register_module("branch7x7x3_4", BasicConv2d(conv(192, 192, 3).stride(2)))) {}

  at::Tensor forward(const at::Tensor& x) {
    const auto branch7x7x3 = branch7x7x3_4_(branch7x7x3_3_(branch7x7x3_2_(branch7x7x3_1_(x))));
    return at::cat({branch3x3_2_(branch3x3_1_(x)), branch7x7x3, at::max_pool2d(x, 3, /*stride=*/2)}, 1);
  }

 private:
  BasicConv2d branch3x3_1_, branch3x3_2_, branch7x7x3_1_, branch7x7x3_2_, branch7x7x3_3_, branch7x7x3_4_;
};
TORCH_MODULE(InceptionD);

// 8x8 grid with the 3x3 convs split into parallel 1x3 and 3x1 (Mixed_7b/c).
class InceptionEImpl : public nn::Module {
 public:
  explicit InceptionEImpl(std::int64_t in)
      : branch1x1_(register_module("branch1x1", BasicConv2d(conv(in, 320, 1)))),
        branch3x3_1_(register_module("branch3x3_1", BasicConv2d(conv(in, 384, 1)))),
        branch3x3_2a_(register_module("branch3x3_2a", BasicConv2d(conv(384, 384, {1, 3}).padding({0, 1})))),
        branch3x3_2b_(register_module("branch3x3_2b", BasicConv2d(conv(384, 384, {3, 1}).padding({1, 0})))),
        branch3x3dbl_1_(register_module("branch3x3dbl_1", BasicConv2d(conv(in, 448, 1)))),
        branch3x3dbl_2_(register_module("branch3x3dbl_2", BasicConv2d(conv(448, 384, 3).padding(1)))),
        branch3x3dbl_3a_(register_module("branch3x3dbl_3a", BasicConv2d(conv(384, 384, {1, 3}).padding({0, 1})))),
        branch3x3dbl_3b_(register_module("branch3x3dbl_3b", BasicConv2d(conv(384, 384, {3, 1}).padding({1, 0})))),
        branch_pool_(register_module("branch_pool", BasicConv2d(conv(in, 192, 1)))) {}

  at::Tensor forward(const at::Tensor& x) {
    const auto branch3x3 = branch3x3_1_(x);
    const auto branch3x3dbl = branch3x3dbl_2_(branch3x3dbl_1_(x));
    return at::cat({branch1x1_(x), at::cat({branch3x3_2a_(branch3x3), branch3x3_2b_(branch3x3)}, 1),
                    at::cat({branch3x3dbl_3a_(branch3x3dbl), branch3x3dbl_3b_(branch3x3dbl)}, 1),
                    branch_pool_(at::avg_pool2d(x, 3, 1, 1))},
                   1);
  }

 private:
  BasicConv2d branch1x1_, branch3x3_1_, branch3x3_2a_, branch3x3_2b_, branch3x3dbl_1_, branch3x3dbl_2_,
      branch3x3dbl_3a_, branch3x3dbl_3b_, branch_pool_;
};
TORCH_MODULE(InceptionE);

// The auxiliary classifier on Mixed_6e's 17x17 output, used in training only.
// Its 5x5/3 average pool leaves 5x5 and its unpadded 5x5 conv leaves 1x1, so
// it needs the full 17x17 grid: a 299x299 input (see kMinimumSideWithAux).
class InceptionAuxImpl : public nn::Module {
 public:
  InceptionAuxImpl(std::int64_t in, std::int64_t num_classes)
      : conv0_(register_module("conv0", BasicConv2d(conv(in, 128, 1)))),
        conv1_(register_module("conv1", BasicConv2d(conv(128, 768, 5)))),
        fc_(register_module("fc", nn::Linear(768, num_classes))) {}

  at::Tensor forward(const at::Tensor& x) {
    const auto features = conv1_(conv0_(at::avg_pool2d(x, 5, /*stride=*/3)));
    return fc_(at::adaptive_avg_pool2d(features, {1, 1}).flatten(1));
  }

 private:
  BasicConv2d conv0_, conv1_;
  nn::Linear fc_;
};
TORCH_MODULE(InceptionAux);

}  // namespace inception_v3

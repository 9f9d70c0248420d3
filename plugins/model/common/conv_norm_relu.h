// The convolution unit every Inception network is built from, shared by the
// inception_v3 (torchvision's BasicConv2d) and inception_resnet_v2 (timm's
// ConvNormAct) plugins: conv without bias (the batch norm's shift replaces
// it), batch norm with eps 0.001 (TF-slim's, kept for the ported weights),
// ReLU. Submodules are named "conv" and "bn", as in both references.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace model_blocks {

namespace nn = torch::nn;

// Shorthand for the references' conv_block(in, out, kernel_size=...) arguments.
inline nn::Conv2dOptions conv(std::int64_t in, std::int64_t out, torch::ExpandingArray<2> kernel) {
  return nn::Conv2dOptions(in, out, kernel);
}

class ConvNormReluImpl : public nn::Module {
 public:
  explicit ConvNormReluImpl(nn::Conv2dOptions options)
      : conv_(register_module("conv", nn::Conv2d(options.bias(false)))),
        bn_(register_module("bn", nn::BatchNorm2d(nn::BatchNorm2dOptions(options.out_channels()).eps(0.001)))) {}

  at::Tensor forward(const at::Tensor& x) { return bn_(conv_(x)).relu_(); }

 private:
  nn::Conv2d conv_;
  nn::BatchNorm2d bn_;
};
TORCH_MODULE(ConvNormRelu);

}  // namespace model_blocks

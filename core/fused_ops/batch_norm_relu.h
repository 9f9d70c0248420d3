// ReLU(batch_norm(x) [+ residual]), the tail of every ResNet-style block, as
// one pass where cuDNN can fuse it: on CUDA, in training, for float16
// channels-last activations, cuDNN's batch norm with the add and ReLU folded
// in (cudnnBatchNormalizationForwardTrainingEx, ops BN_ACTIVATION and
// BN_ADD_ACTIVATION, and the backward to match) reads and writes each
// activation once where eager LibTorch runs batch norm, add and ReLU as
// separate kernels, each over the whole tensor. The fused kernels are the
// NHWC persistent batch norm MXNet's ResNet-50 used in MLPerf.
//
// Everywhere else (the CPU, float32 or bfloat16, NCHW, evaluation) it is
// the module's own forward, add and relu, so a model written with it is the
// same model on every device. The module keeps its parameters and buffers
// (weights load and save by the same names); the fused path updates its
// running statistics and num_batches_tracked as BatchNorm2d::forward does.
//
// A plugin includes orchestrate/fused_ops/batch_norm_relu.h and links
// orchestrate::fused_ops.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/batchnorm.h>

#include <string>

namespace orchestrate::fused_ops {

enum class NormFusion {
  off,    // always the module's forward, add and relu
  cudnn,  // cuDNN's fused kernels where they apply (why_not_fused is "")
};

// relu(norm(x) + residual), or relu(norm(x)) when `residual` is undefined.
// With NormFusion::cudnn, a cuDNN refusal turns the fused path off for that
// shape (with or without the residual) for the rest of the process, with
// one line on stderr naming cuDNN's status; other shapes stay fused.
at::Tensor batch_norm_relu(torch::nn::BatchNorm2dImpl& norm, const at::Tensor& x, const at::Tensor& residual,
                           NormFusion fusion);

// Why cuDNN's fused kernels do not apply to this call, or "" when they do.
std::string why_not_fused(const torch::nn::BatchNorm2dImpl& norm, const at::Tensor& x, const at::Tensor& residual);

// Why this process cannot run the fused kernels on any input (no cuDNN
// loaded, or one without the functions), or "" when it can on a CUDA device
// (cuDNN may still refuse a shape: batch_norm_relu).
std::string why_cudnn_cannot_fuse();

}  // namespace orchestrate::fused_ops

// The backward of relu(batch_norm(x) [+ residual]) by LibTorch's own
// kernels, from what the fused forward saved: the way back when cuDNN
// refuses the fused backward after its forward ran (a refusal the forward's
// size query did not foresee). Without it such a refusal would stop the run.
// Private to core/fused_ops (cudnn_batch_norm_relu.cpp).
#pragma once

#include <ATen/core/Tensor.h>

namespace orchestrate::fused_ops {

struct BatchNormReluGradients {
  at::Tensor x, residual, weight, bias;  // residual undefined when none was added
};

// `y`: the forward's output, after the ReLU (its mask); `saved_mean` and
// `saved_inverse_std`: the batch's mean and 1/sqrt(var + eps), as cuDNN and
// LibTorch's training batch norm both save them.
BatchNormReluGradients unfused_batch_norm_relu_backward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& y,
                                                        const at::Tensor& weight, const at::Tensor& saved_mean,
                                                        const at::Tensor& saved_inverse_std, double eps,
                                                        bool adds_residual);

}  // namespace orchestrate::fused_ops

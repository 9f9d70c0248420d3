// The fused path of batch_norm_relu.h: cuDNN's batch norm with the residual
// add and ReLU folded in, forward and backward, as one autograd function.
// Private to core/fused_ops; batch_norm_relu.cpp checks the inputs first
// (why_not_fused).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <stdexcept>

namespace orchestrate::fused_ops {

// The fused NHWC kernels read with vector loads: each tensor starts on this boundary.
inline constexpr std::uintptr_t kAlignmentBytes = 16;
inline bool aligned(const at::Tensor& tensor) {
  return reinterpret_cast<std::uintptr_t>(tensor.const_data_ptr()) % kAlignmentBytes == 0;
}

// The fused call cannot run (the input is not on a CUDA device, or cuDNN
// returned a status other than success before the forward wrote anything,
// the backward's workspace query included): nothing was written, and the
// caller may run the unfused path instead.
struct CudnnRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// relu(batch_norm(x) [+ residual]) in training: x and residual (undefined for
// none) float16, 4-d, contiguous in channels_last, on one CUDA device;
// weight, bias, running_mean and running_var float32 of x's channels. The
// running statistics are updated in place by `exponential_average_factor`
// (the momentum), with the unbiased batch variance, as at::batch_norm does.
// Differentiable in x, residual, weight and bias; a backward cuDNN refuses
// runs LibTorch's kernels instead (batch_norm_relu_backward.h).
at::Tensor cudnn_batch_norm_relu(const at::Tensor& x, const at::Tensor& residual, const at::Tensor& weight,
                                 const at::Tensor& bias, const at::Tensor& running_mean,
                                 const at::Tensor& running_var, double exponential_average_factor, double eps);

}  // namespace orchestrate::fused_ops

#include "batch_norm_relu.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <c10/core/ScalarType.h>

#include <cstdint>

#include "cudnn_batch_norm_relu.h"
#include "cudnn_library.h"
#include "refused_calls.h"

namespace orchestrate::fused_ops {
namespace {

// The fused NHWC kernels read channels in groups of four (and start on kAlignmentBytes).
constexpr std::int64_t kChannelMultiple = 4;

at::Tensor unfused(torch::nn::BatchNorm2dImpl& norm, const at::Tensor& x, const at::Tensor& residual) {
  at::Tensor y = norm.forward(x);
  if (residual.defined()) y = y.add_(residual);
  return y.relu_();
}

// What BatchNorm2d::forward does to its counter and momentum in training.
double exponential_average_factor(torch::nn::BatchNorm2dImpl& norm) {
  norm.num_batches_tracked.add_(1);
  const auto& momentum = norm.options.momentum();
  return momentum.has_value() ? *momentum : 1.0 / static_cast<double>(norm.num_batches_tracked.item<std::int64_t>());
}

}  // namespace

std::string why_not_fused(const torch::nn::BatchNorm2dImpl& norm, const at::Tensor& x, const at::Tensor& residual) {
  if (!norm.is_training()) return "the module is in evaluation mode";
  if (!norm.options.affine() || !norm.options.track_running_stats()) {
    return "the batch norm has no affine parameters or running statistics";
  }
  if (x.dim() != 4) return "the input is " + std::to_string(x.dim()) + "-d, not 4-d";
  if (x.scalar_type() != at::kHalf) return std::string("the input is ") + c10::toString(x.scalar_type()) + ", not Half";
  if (norm.weight.scalar_type() != at::kFloat) return "the batch norm's parameters are not Float";
  if (!x.is_contiguous(at::MemoryFormat::ChannelsLast)) return "the input is not channels_last";
  // Left to the unfused kernels, which say what is wrong in LibTorch's words.
  if (x.size(1) == 0 || x.numel() < 2 * x.size(1)) return "fewer than 2 values a channel: no batch variance";
  if (norm.weight.device() != x.device() || norm.running_mean.device() != x.device()) {
    return "the batch norm is on " + norm.weight.device().str() + ", the input on " + x.device().str();
  }
  if (x.size(1) % kChannelMultiple != 0) {
    return std::to_string(x.size(1)) + " channels, not a multiple of " + std::to_string(kChannelMultiple);
  }
  if (residual.defined() &&
      (residual.sizes() != x.sizes() || residual.scalar_type() != x.scalar_type() ||
       residual.device() != x.device() || !residual.is_contiguous(at::MemoryFormat::ChannelsLast))) {
    return "the residual " + shape_of(residual) + " differs from the input " + shape_of(x) +
           " in shape, type, device or layout";
  }
  if (!aligned(x) || (residual.defined() && !aligned(residual))) {
    return "the input or the residual does not start on a " + std::to_string(kAlignmentBytes) + "-byte boundary";
  }
  // torch.backends.cudnn.enabled = False, as LibTorch's own batch norm honours it.
  if (!at::globalContext().userEnabledCuDNN()) return "cuDNN is switched off";
  if (!x.is_cuda()) return "the input is not on a CUDA device";
  if (refused_calls().contains(x, residual.defined())) return "cuDNN refused this shape earlier";
  return why_cudnn_cannot_fuse();
}

std::string why_cudnn_cannot_fuse() { return CudnnLibrary::loaded().missing; }

at::Tensor batch_norm_relu(torch::nn::BatchNorm2dImpl& norm, const at::Tensor& x, const at::Tensor& residual,
                           NormFusion fusion) {
  if (fusion == NormFusion::off || !why_not_fused(norm, x, residual).empty()) return unfused(norm, x, residual);
  const double factor = exponential_average_factor(norm);
  try {
    return cudnn_batch_norm_relu(x, residual, norm.weight, norm.bias, norm.running_mean, norm.running_var, factor,
                                 norm.options.eps());
  } catch (const CudnnRefused& refused) {
    norm.num_batches_tracked.sub_(1);  // the unfused forward counts this batch
    note_refusal(x, residual.defined(), refused.what());
    return unfused(norm, x, residual);
  }
}

}  // namespace orchestrate::fused_ops

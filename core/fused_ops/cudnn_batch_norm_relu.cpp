#include "cudnn_batch_norm_relu.h"

#include <ATen/ATen.h>
#include <ATen/cudnn/Handle.h>
#include <ATen/record_function.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <optional>
#include <string>

#include "batch_norm_relu_backward.h"
#include "cudnn_library.h"
#include "refused_calls.h"

namespace orchestrate::fused_ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// Persistent mode is the one cuDNN fuses the add and the activation in (NHWC, float16 only).
constexpr cudnnBatchNormMode_t kMode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;

std::string status_text(const CudnnLibrary& cudnn, cudnnStatus_t status) {
  return std::string(cudnn.get_error_string(status)) + " (" + std::to_string(static_cast<int>(status)) + ")";
}

// Any call of the forward cuDNN does not take (a device or version without
// the fused kernels says CUDNN_STATUS_NOT_SUPPORTED from its size queries
// already) leaves the unfused path to the caller.
void check(const CudnnLibrary& cudnn, cudnnStatus_t status, const char* call) {
  if (status != CUDNN_STATUS_SUCCESS) throw CudnnRefused(std::string(call) + " returned " + status_text(cudnn, status));
}

// The descriptors one call needs: the activations' (x, y, the residual and
// every gradient share one shape and layout), the per-channel parameters'
// (derived from it: float for float16 activations) and ReLU.
class Descriptors {
 public:
  explicit Descriptors(const at::Tensor& x) : cudnn_(CudnnLibrary::loaded()) {
    try {
      describe(x);
    } catch (...) {
      release();  // the destructor does not run for a constructor that throws
      throw;
    }
  }
  ~Descriptors() { release(); }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;

  cudnnTensorDescriptor_t activations = nullptr;
  cudnnTensorDescriptor_t per_channel = nullptr;
  cudnnActivationDescriptor_t relu = nullptr;

 private:
  void describe(const at::Tensor& x) {
    check(cudnn_, cudnn_.create_tensor_descriptor(&activations), "cudnnCreateTensorDescriptor");
    check(cudnn_, cudnn_.create_tensor_descriptor(&per_channel), "cudnnCreateTensorDescriptor");
    check(cudnn_, cudnn_.create_activation_descriptor(&relu), "cudnnCreateActivationDescriptor");
    check(cudnn_,
          cudnn_.set_tensor_4d_descriptor(activations, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, static_cast<int>(x.size(0)),
                                          static_cast<int>(x.size(1)), static_cast<int>(x.size(2)),
                                          static_cast<int>(x.size(3))),
          "cudnnSetTensor4dDescriptor");
    check(cudnn_, cudnn_.derive_bn_tensor_descriptor(per_channel, activations, kMode), "cudnnDeriveBNTensorDescriptor");
    check(cudnn_, cudnn_.set_activation_descriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0),
          "cudnnSetActivationDescriptor");
  }
  void release() {
    if (relu != nullptr) cudnn_.destroy_activation_descriptor(relu);
    if (per_channel != nullptr) cudnn_.destroy_tensor_descriptor(per_channel);
    if (activations != nullptr) cudnn_.destroy_tensor_descriptor(activations);
  }

  const CudnnLibrary& cudnn_;
};

cudnnBatchNormOps_t ops_for(bool adds_residual) {
  return adds_residual ? CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION : CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
}

// cuDNN's handle for this device, on the current stream (what LibTorch's own cuDNN calls use).
cudnnHandle_t handle_on_current_stream(const CudnnLibrary& cudnn) {
  cudnnHandle_t handle = at::native::getCudnnHandle();
  check(cudnn, cudnn.set_stream(handle, c10::cuda::getCurrentCUDAStream().stream()), "cudnnSetStream");
  return handle;
}

// At least one byte: an empty tensor's null pointer beside a size of 0 is
// not a buffer every cuDNN version takes.
at::Tensor bytes(std::size_t size, const at::Tensor& like) {
  return at::empty({static_cast<std::int64_t>(std::max<std::size_t>(size, 1))}, like.options().dtype(at::kByte));
}

// Only a defined tensor's pointer: cuDNN takes null for the residual it does not add.
void* pointer_or_null(const at::Tensor& tensor) { return tensor.defined() ? tensor.data_ptr() : nullptr; }

std::size_t backward_workspace_size(const CudnnLibrary& cudnn, cudnnHandle_t handle, const Descriptors& descriptors,
                                    cudnnBatchNormOps_t ops, bool adds) {
  std::size_t size = 0;
  check(cudnn,
        cudnn.backward_workspace_size(handle, kMode, ops, descriptors.activations, descriptors.activations,
                                      descriptors.activations, adds ? descriptors.activations : nullptr,
                                      descriptors.activations, descriptors.per_channel, descriptors.relu, &size),
        "cudnnGetBatchNormalizationBackwardExWorkspaceSize");
  return size;
}

class FusedBatchNormRelu : public torch::autograd::Function<FusedBatchNormRelu> {
 public:
  // The residual is optional, not an undefined tensor: Function::apply asks
  // every tensor argument for its device, and an undefined one has none.
  static at::Tensor forward(AutogradContext* context, const at::Tensor& x,
                            const std::optional<at::Tensor>& maybe_residual, const at::Tensor& weight,
                            const at::Tensor& bias, const at::Tensor& running_mean, const at::Tensor& running_var,
                            double exponential_average_factor, double eps) {
    // Named in profiles (the profile hook, trace_breakdown.py counts it as batch norm).
    RECORD_FUNCTION("orchestrate::batch_norm_relu", std::vector<c10::IValue>());
    if (!x.is_cuda()) throw CudnnRefused("the input is not on a CUDA device");
    const CudnnLibrary& cudnn = CudnnLibrary::loaded();
    const c10::cuda::CUDAGuard device(x.device());
    const at::Tensor residual = maybe_residual.value_or(at::Tensor());
    const bool adds = residual.defined();
    const cudnnBatchNormOps_t ops = ops_for(adds);
    const Descriptors descriptors(x);
    cudnnHandle_t handle = handle_on_current_stream(cudnn);
    std::size_t workspace_size = 0;
    std::size_t reserve_size = 0;
    check(cudnn,
          cudnn.forward_workspace_size(handle, kMode, ops, descriptors.activations,
                                       adds ? descriptors.activations : nullptr, descriptors.activations,
                                       descriptors.per_channel, descriptors.relu, &workspace_size),
          "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize");
    check(cudnn, cudnn.reserve_space_size(handle, kMode, ops, descriptors.relu, descriptors.activations, &reserve_size),
          "cudnnGetBatchNormalizationTrainingExReserveSpaceSize");
    // Asked now too, so that a backward cuDNN would refuse leaves the unfused
    // path to the caller before anything ran, not a fused forward without a way back.
    backward_workspace_size(cudnn, handle, descriptors, ops, adds);
    at::Tensor y = at::empty_like(x, at::MemoryFormat::ChannelsLast);
    at::Tensor saved_mean = at::empty_like(weight);
    at::Tensor saved_inverse_std = at::empty_like(weight);
    at::Tensor workspace = bytes(workspace_size, x);
    at::Tensor reserve = bytes(reserve_size, x);
    const float one = 1.0F;
    const float zero = 0.0F;
    check(cudnn, cudnn.forward_training(
        handle, kMode, ops, &one, &zero, descriptors.activations, x.data_ptr(),
        adds ? descriptors.activations : nullptr, pointer_or_null(residual), descriptors.activations, y.data_ptr(),
        descriptors.per_channel, weight.data_ptr(), bias.data_ptr(), exponential_average_factor,
        running_mean.data_ptr(), running_var.data_ptr(), eps, saved_mean.data_ptr(), saved_inverse_std.data_ptr(),
        descriptors.relu, workspace.data_ptr(), workspace_size, reserve.data_ptr(), reserve_size),
          "cudnnBatchNormalizationForwardTrainingEx");
    // Written in place behind autograd's back: counted as at::batch_norm's
    // in-place update of them is, so a tensor saved from them earlier is
    // found stale, not silently read.
    torch::autograd::impl::bump_version(running_mean);
    torch::autograd::impl::bump_version(running_var);
    context->save_for_backward({x, y, weight, bias, saved_mean, saved_inverse_std, reserve});
    context->saved_data["eps"] = eps;
    context->saved_data["adds"] = adds;
    return y;
  }

  // The forward ran fused; a backward cuDNN refuses takes LibTorch's
  // kernels from what the forward saved, and the shape runs unfused from
  // the next forward on.
  static tensor_list backward(AutogradContext* context, tensor_list output_gradients) {
    try {
      return fused_backward(context, output_gradients);
    } catch (const CudnnRefused& refused) {
      return unfused_backward(context, output_gradients, refused.what());
    }
  }

 private:
  static tensor_list fused_backward(AutogradContext* context, const tensor_list& output_gradients) {
    if (!output_gradients[0].defined()) return tensor_list(8);  // the output reached no loss: no gradients
    RECORD_FUNCTION("orchestrate::batch_norm_relu_backward", std::vector<c10::IValue>());
    const CudnnLibrary& cudnn = CudnnLibrary::loaded();
    const auto saved = context->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& y = saved[1];
    const at::Tensor& weight = saved[2];
    const at::Tensor& bias = saved[3];
    const at::Tensor& reserve = saved[6];
    const double eps = context->saved_data["eps"].toDouble();
    const bool adds = context->saved_data["adds"].toBool();
    const c10::cuda::CUDAGuard device(x.device());
    // The gradient of an output reached by a broadcast (a pooled head) is
    // not dense; cuDNN reads packed NHWC.
    // ... and a view that is packed may still start off the kernels' boundary.
    at::Tensor dy = output_gradients[0].to(at::kHalf).contiguous(at::MemoryFormat::ChannelsLast);
    if (!aligned(dy)) dy = dy.clone(at::MemoryFormat::ChannelsLast);
    const cudnnBatchNormOps_t ops = ops_for(adds);
    const Descriptors descriptors(x);
    cudnnHandle_t handle = handle_on_current_stream(cudnn);
    at::Tensor dx = at::empty_like(x, at::MemoryFormat::ChannelsLast);
    at::Tensor dresidual = adds ? at::empty_like(x, at::MemoryFormat::ChannelsLast) : at::Tensor();
    at::Tensor dweight = at::empty_like(weight);
    at::Tensor dbias = at::empty_like(bias);
    const std::size_t workspace_size = backward_workspace_size(cudnn, handle, descriptors, ops, adds);
    at::Tensor workspace = bytes(workspace_size, x);
    const float one = 1.0F;
    const float zero = 0.0F;
    check(cudnn,
          cudnn.backward(handle, kMode, ops, &one, &zero, &one, &zero, descriptors.activations, x.data_ptr(),
                         descriptors.activations, y.data_ptr(), descriptors.activations, dy.data_ptr(),
                         adds ? descriptors.activations : nullptr, pointer_or_null(dresidual),
                         descriptors.activations, dx.data_ptr(), descriptors.per_channel, weight.data_ptr(),
                         bias.data_ptr(), dweight.data_ptr(), dbias.data_ptr(), eps, saved[4].data_ptr(),
                         saved[5].data_ptr(), descriptors.relu, workspace.data_ptr(), workspace_size,
                         reserve.data_ptr(), reserve.numel()),
          "cudnnBatchNormalizationBackwardEx");
    return {dx, dresidual, dweight, dbias, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }

  static tensor_list unfused_backward(AutogradContext* context, const tensor_list& output_gradients,
                                      const std::string& refusal) {
    const auto saved = context->get_saved_variables();
    const bool adds = context->saved_data["adds"].toBool();
    note_refusal(saved[0], adds, std::string("backward: ") + refusal);
    const c10::cuda::CUDAGuard device(saved[0].device());
    const BatchNormReluGradients gradients =
        unfused_batch_norm_relu_backward(output_gradients[0], saved[0], saved[1], saved[2], saved[4], saved[5],
                                         context->saved_data["eps"].toDouble(), adds);
    return {gradients.x, gradients.residual, gradients.weight, gradients.bias,
            at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor cudnn_batch_norm_relu(const at::Tensor& x, const at::Tensor& residual, const at::Tensor& weight,
                                 const at::Tensor& bias, const at::Tensor& running_mean,
                                 const at::Tensor& running_var, double exponential_average_factor, double eps) {
  const std::optional<at::Tensor> maybe_residual = residual.defined() ? std::optional(residual) : std::nullopt;
  return FusedBatchNormRelu::apply(x, maybe_residual, weight, bias, running_mean, running_var,
                                   exponential_average_factor, eps);
}

}  // namespace orchestrate::fused_ops

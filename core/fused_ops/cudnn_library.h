// The cuDNN functions the fused batch norm calls, taken from the cuDNN that
// LibTorch's CUDA build has already loaded (libtorch_cuda needs
// libcudnn.so.9), not linked: the process then has one cuDNN, LibTorch's,
// whatever version its wheel ships, and a plugin finds it wherever that
// wheel is, with no path of the build machine in it.
// Private to core/fused_ops.
#pragma once

#include <cudnn.h>

#include <string>

namespace orchestrate::fused_ops {

struct CudnnLibrary {
  decltype(&cudnnGetErrorString) get_error_string = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnCreateTensorDescriptor) create_tensor_descriptor = nullptr;
  decltype(&cudnnSetTensor4dDescriptor) set_tensor_4d_descriptor = nullptr;
  decltype(&cudnnDeriveBNTensorDescriptor) derive_bn_tensor_descriptor = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor_descriptor = nullptr;
  decltype(&cudnnCreateActivationDescriptor) create_activation_descriptor = nullptr;
  decltype(&cudnnSetActivationDescriptor) set_activation_descriptor = nullptr;
  decltype(&cudnnDestroyActivationDescriptor) destroy_activation_descriptor = nullptr;
  decltype(&cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize) forward_workspace_size = nullptr;
  decltype(&cudnnGetBatchNormalizationBackwardExWorkspaceSize) backward_workspace_size = nullptr;
  decltype(&cudnnGetBatchNormalizationTrainingExReserveSpaceSize) reserve_space_size = nullptr;
  decltype(&cudnnBatchNormalizationForwardTrainingEx) forward_training = nullptr;
  decltype(&cudnnBatchNormalizationBackwardEx) backward = nullptr;

  // Looked up once. `missing` names what could not be found ("" when all was).
  static const CudnnLibrary& loaded();
  std::string missing;
};

}  // namespace orchestrate::fused_ops

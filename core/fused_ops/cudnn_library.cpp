#include "cudnn_library.h"

#include <dlfcn.h>

namespace orchestrate::fused_ops {
namespace {

// cuDNN 9's front library, which forwards the legacy API to libcudnn_ops.
constexpr const char* kCudnnSoname = "libcudnn.so.9";

template <class Function>
void look_up(void* library, const char* name, Function& function, std::string& missing) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  if (function == nullptr && missing.empty()) missing = std::string(name) + " is not in " + kCudnnSoname;
}

CudnnLibrary look_up_all() {
  CudnnLibrary cudnn;
  // RTLD_NOLOAD: only the copy LibTorch loaded; none means LibTorch has no cuDNN.
  void* library = dlopen(kCudnnSoname, RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) {
    cudnn.missing = std::string(kCudnnSoname) + " is not loaded (a LibTorch without CUDA or cuDNN)";
    return cudnn;
  }
  std::string& missing = cudnn.missing;
  look_up(library, "cudnnGetErrorString", cudnn.get_error_string, missing);
  look_up(library, "cudnnSetStream", cudnn.set_stream, missing);
  look_up(library, "cudnnCreateTensorDescriptor", cudnn.create_tensor_descriptor, missing);
  look_up(library, "cudnnSetTensor4dDescriptor", cudnn.set_tensor_4d_descriptor, missing);
  look_up(library, "cudnnDeriveBNTensorDescriptor", cudnn.derive_bn_tensor_descriptor, missing);
  look_up(library, "cudnnDestroyTensorDescriptor", cudnn.destroy_tensor_descriptor, missing);
  look_up(library, "cudnnCreateActivationDescriptor", cudnn.create_activation_descriptor, missing);
  look_up(library, "cudnnSetActivationDescriptor", cudnn.set_activation_descriptor, missing);
  look_up(library, "cudnnDestroyActivationDescriptor", cudnn.destroy_activation_descriptor, missing);
  look_up(library, "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize", cudnn.forward_workspace_size, missing);
  look_up(library, "cudnnGetBatchNormalizationBackwardExWorkspaceSize", cudnn.backward_workspace_size, missing);
  look_up(library, "cudnnGetBatchNormalizationTrainingExReserveSpaceSize", cudnn.reserve_space_size, missing);
  look_up(library, "cudnnBatchNormalizationForwardTrainingEx", cudnn.forward_training, missing);
  look_up(library, "cudnnBatchNormalizationBackwardEx", cudnn.backward, missing);
  return cudnn;
}

}  // namespace

const CudnnLibrary& CudnnLibrary::loaded() {
  static const CudnnLibrary cudnn = look_up_all();
  return cudnn;
}

}  // namespace orchestrate::fused_ops

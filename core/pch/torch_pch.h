// The LibTorch headers most files need, compiled once (see core/CMakeLists.txt).
// Only headers that are stable and expensive belong here.
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

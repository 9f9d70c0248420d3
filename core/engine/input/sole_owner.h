// Whether a host buffer may be written again: no tensor but `tensor` itself
// refers to its memory (no other handle to it, no view of its storage).
#pragma once

#include <ATen/core/Tensor.h>

namespace orchestrate {

inline bool sole_owner(const at::Tensor& tensor) {
  return tensor.use_count() == 1 && tensor.storage().use_count() == 1;
}

}  // namespace orchestrate

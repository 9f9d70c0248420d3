#include "refused_calls.h"

#include <iostream>

namespace orchestrate::fused_ops {

RefusedCalls& refused_calls() {
  static RefusedCalls calls;
  return calls;
}

void note_refusal(const at::Tensor& x, bool adds_residual, const std::string& what) {
  if (!refused_calls().add(x, adds_residual)) return;
  std::cerr << "orchestrate: fused batch norm + ReLU off for input " << shape_of(x)
            << (adds_residual ? " + residual" : "") << ": " << what << "; the unfused kernels run for that shape\n";
}

std::string shape_of(const at::Tensor& tensor) {
  std::string text = "[";
  for (std::int64_t d = 0; d < tensor.dim(); ++d) text += (d ? ", " : "") + std::to_string(tensor.size(d));
  return text + "]";
}

}  // namespace orchestrate::fused_ops

#include "batch_norm_relu_backward.h"

#include <ATen/ATen.h>

#include <tuple>

namespace orchestrate::fused_ops {

BatchNormReluGradients unfused_batch_norm_relu_backward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& y,
                                                        const at::Tensor& weight, const at::Tensor& saved_mean,
                                                        const at::Tensor& saved_inverse_std, double eps,
                                                        bool adds_residual) {
  // ReLU's gradient where its output is positive: the gradient of the sum
  // batch_norm(x) + residual, and so of the residual itself.
  const at::Tensor d_sum = at::threshold_backward(dy.to(x.scalar_type()), y, 0);
  auto [dx, dweight, dbias] =
      at::native_batch_norm_backward(d_sum, x, weight, /*running_mean=*/std::nullopt, /*running_var=*/std::nullopt,
                                     saved_mean, saved_inverse_std, /*train=*/true, eps, {true, true, true});
  return {dx, adds_residual ? d_sum : at::Tensor(), dweight, dbias};
}

}  // namespace orchestrate::fused_ops

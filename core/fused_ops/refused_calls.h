// The fused calls cuDNN has refused in this process, by what its kernels are
// chosen on: the activations' shape, and whether the residual is added.
// Only those run unfused from then on: cuDNN's persistent batch-norm kernels
// have limits of their own per shape, so a refusal of one (say the stem's
// 112x112) says nothing of the others, which keep the fused kernels.
// Private to core/fused_ops (batch_norm_relu.cpp, cudnn_batch_norm_relu.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace orchestrate::fused_ops {

class RefusedCalls {
 public:
  // Whether cuDNN refused a call like this one before.
  bool contains(const at::Tensor& x, bool adds_residual) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return keys_.count(key(x, adds_residual)) > 0;
  }
  // Notes a refusal; true the first time for such a call (say it once).
  bool add(const at::Tensor& x, bool adds_residual) {
    const std::lock_guard<std::mutex> lock(mutex_);
    return keys_.insert(key(x, adds_residual)).second;
  }

 private:
  static std::vector<std::int64_t> key(const at::Tensor& x, bool adds_residual) {
    std::vector<std::int64_t> out(x.sizes().begin(), x.sizes().end());
    out.push_back(adds_residual ? 1 : 0);
    return out;
  }

  mutable std::mutex mutex_;
  std::set<std::vector<std::int64_t>> keys_;
};

// This process's refusals, forward's and backward's.
RefusedCalls& refused_calls();
// Notes cuDNN's refusal (`what`: its words) of a call like this one, with
// one line on stderr the first time for its shape.
void note_refusal(const at::Tensor& x, bool adds_residual, const std::string& what);

// "[2, 8, 3, 3]". Core's shape_text lives in its checkpoint library, which
// this SDK part (linked into plugins) does not link.
std::string shape_of(const at::Tensor& tensor);

}  // namespace orchestrate::fused_ops

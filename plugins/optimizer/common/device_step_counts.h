// Step counts for ATen's fused optimizer kernels, kept in line with the
// int64 step that torch's C++ ParamState classes save and load.
//
// at::_fused_adam_, _fused_adamw_ and _fused_adagrad_ read each parameter's
// step from a float32 scalar tensor on the parameter's device (torch.optim's
// fused path keeps it there too), while AdamParamState::step() and
// AdagradParamState::step() are host integers. This keeps one device tensor
// per parameter whose value always equals the host count it was last
// advanced to: it is made from the host count when missing or stale (a fresh
// optimizer, after load(), a parameter that had no gradient for a while) and
// otherwise advanced with one _foreach_add_ per group. step() therefore
// never reads a device value back, so it never waits for the device.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace orchestrate::optimizers {

class DeviceStepCounts {
 public:
  // The step tensors of `params`, advanced from `steps_before` to one more.
  std::vector<at::Tensor> advance(const std::vector<at::Tensor>& params, const std::vector<std::int64_t>& steps_before) {
    std::vector<at::Tensor> tensors;
    tensors.reserve(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
      auto& entry = entries_[params[i].unsafeGetTensorImpl()];
      if (!entry.tensor.defined() || entry.host_step != steps_before[i] || entry.tensor.device() != params[i].device())
        entry.tensor = at::full({}, static_cast<double>(steps_before[i]),
                                at::TensorOptions().dtype(at::kFloat).device(params[i].device()));
      entry.host_step = steps_before[i] + 1;
      tensors.push_back(entry.tensor);
    }
    at::_foreach_add_(tensors, 1);
    return tensors;
  }

 private:
  struct Entry {
    at::Tensor tensor;
    std::int64_t host_step = 0;  // the value `tensor` holds
  };
  std::unordered_map<const void*, Entry> entries_;
};

}  // namespace orchestrate::optimizers

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
//
// A step skipped on the device (SkipsOnDevice) takes its count back there,
// as torch.optim's fused path does, while the host count has moved on; the
// entry still matches the host count, so the device keeps its own value.
// write_back() makes the host counts the device's before they are saved.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <unordered_map>

#include "step_inputs.h"
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

  // After the kernel, whose step `found_inf` (0 or 1) skipped: the skipped
  // step does not count.
  void take_back_if(const std::vector<at::Tensor>& steps, const at::Tensor& found_inf) {
    at::_foreach_add_(steps, found_inf, /*alpha=*/-1);
    host_counts_may_lag_ = true;
  }

  // Sets each `State`'s host step (AdamParamState, AdagradParamState) to the
  // device count, where a skip on the device may have left them apart. One
  // read of the device, and only after such a skip: for save().
  template <class State>
  void write_back(const ParamStates& states) {
    if (!host_counts_may_lag_) return;
    std::vector<Entry*> entries;
    std::vector<at::Tensor> counts;
    std::vector<State*> targets;
    for (auto& [key, entry] : entries_) {
      const auto it = states.find(const_cast<void*>(key));
      if (it == states.end()) continue;
      entries.push_back(&entry);
      counts.push_back(entry.tensor.reshape({1}));
      targets.push_back(static_cast<State*>(it->second.get()));
    }
    if (!counts.empty()) {
      const auto values = at::cat(counts).to(at::kCPU, at::kDouble);
      const auto* value = values.data_ptr<double>();
      for (std::size_t i = 0; i < targets.size(); ++i) {
        const auto count = static_cast<std::int64_t>(value[i]);
        targets[i]->step(count);
        entries[i]->host_step = count;
      }
    }
    host_counts_may_lag_ = false;
  }

  // Whether a skipped step has left a host count ahead of its device count.
  bool may_lag() const { return host_counts_may_lag_; }

  // After load(): the host counts are the loaded ones, so every device count is remade from them.
  void forget() {
    entries_.clear();
    host_counts_may_lag_ = false;
  }

 private:
  struct Entry {
    at::Tensor tensor;
    std::int64_t host_step = 0;  // the host count `tensor` was last advanced to
  };
  std::unordered_map<const void*, Entry> entries_;
  bool host_counts_may_lag_ = false;
};

}  // namespace orchestrate::optimizers

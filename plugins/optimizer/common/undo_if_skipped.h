// Skipping a step on the device (SkipsOnDevice) for an optimizer whose
// update is ATen foreach ops: those take no found_inf flag, only the fused
// kernels do. torch.amp.GradScaler reads the flag on the host for such an
// optimizer and calls step() only when it is 0, a wait for the device every
// fp16 update. Here the step always runs: the values it is about to write
// are kept, and put back afterwards where the flag is 1, by one select over
// them all. Nothing waits; the price is a few launches and two copies of the
// written values in temporary memory, on every update that hands a flag.
//
// A select, not a blend (old * f + new * (1 - f)): a skipped step's new
// values are inf or NaN, and inf * 0 is NaN.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace orchestrate::optimizers {

using TensorLists = std::vector<std::vector<at::Tensor>>;

class UndoIfSkipped {
 public:
  // Keeps the values of `will_write` (the parameters and each state list)
  // when a flag is armed; keeps nothing otherwise.
  UndoIfSkipped(const std::optional<at::Tensor>& found_inf, const TensorLists& will_write) {
    if (!found_inf) return;
    skipped_ = found_inf->ne(0);
    kept_ = flat_copy(will_write);
    for (const auto& list : will_write)
      for (const auto& tensor : list) kept_strides_.push_back(tensor.strides().vec());
  }

  // Where the flag is 1, puts the kept values back into `written`: the same
  // tensors in the same order, or in place of a state the step replaced
  // rather than wrote (ftrl's accum), its replacement.
  void put_back_if_skipped(const TensorLists& written) const {
    if (!kept_.defined()) return;
    std::size_t i = 0;
    for (const auto& list : written)
      for (const auto& tensor : list)
        // A replacement laid out otherwise would be read in another order than the kept values.
        TORCH_CHECK(i < kept_strides_.size() && tensor.strides().vec() == kept_strides_[i++],
                    "UndoIfSkipped: the written tensors are not laid out as the kept ones (a bug)");
    auto chosen = flat_copy(written);
    TORCH_CHECK(chosen.numel() == kept_.numel(), "UndoIfSkipped: the written tensors are not the kept ones (a bug)");
    at::where_out(chosen, skipped_, kept_, chosen);
    std::vector<at::Tensor> destinations, sources;
    std::int64_t offset = 0;
    for (const auto& list : written)
      for (const auto& tensor : list) {
        const auto values = chosen.narrow(0, offset, tensor.numel());
        offset += tensor.numel();
        if (in_memory_order(tensor)) {
          destinations.push_back(flat_alias(tensor));
          sources.push_back(values);
        } else {
          destinations.push_back(tensor);
          sources.push_back(values.view(tensor.sizes()));
        }
      }
    at::_foreach_copy_(destinations, sources);
  }

 private:
  // A dense tensor (contiguous or channels-last) is read and written as its
  // memory, one flat view without a copy; any other in index order.
  static bool in_memory_order(const at::Tensor& tensor) { return tensor.is_non_overlapping_and_dense(); }
  static at::Tensor flat_alias(const at::Tensor& tensor) {
    return tensor.as_strided({tensor.numel()}, {1}, tensor.storage_offset());
  }

  static at::Tensor flat_copy(const TensorLists& lists) {
    std::vector<at::Tensor> flat;
    for (const auto& list : lists)
      for (const auto& tensor : list)
        flat.push_back(in_memory_order(tensor) ? flat_alias(tensor) : tensor.reshape({-1}));
    return at::cat(flat);
  }

  at::Tensor skipped_;  // 0-dim bool on the parameters' device
  at::Tensor kept_;
  std::vector<std::vector<std::int64_t>> kept_strides_;
};

}  // namespace orchestrate::optimizers

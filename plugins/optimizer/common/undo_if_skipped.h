// Skipping a step on the device (SkipsOnDevice) for an optimizer whose
// update is ATen foreach ops: those take no found_inf flag, only the fused
// kernels do. torch.amp.GradScaler reads the flag on the host for such an
// optimizer and calls step() only when it is 0, a wait for the device every
// fp16 update. Here the step always runs: the values it is about to write
// are kept, and put back afterwards where the flag is 1, by one select over
// them all. Nothing waits; the price is a few launches, a copy of the
// written values and a chunk more of temporary memory, on every update that
// hands a flag.
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
  // The values are put back a chunk of tensors at a time, so the select
  // needs one chunk of temporary memory beside the kept copy, not a second
  // copy of everything; a chunk also stays within 32-bit indexing, which
  // CUDA's batched cat needs. 64 Mi elements: 256 MiB of float32.
  static constexpr std::int64_t kChunkElements = std::int64_t{1} << 26;

  // Keeps the values of `will_write` (the parameters and each state list)
  // when a flag is armed; keeps nothing otherwise.
  UndoIfSkipped(const std::optional<at::Tensor>& found_inf, const TensorLists& will_write,
                std::int64_t chunk_elements = kChunkElements) {
    if (!found_inf) return;
    skipped_ = found_inf->ne(0);
    const auto tensors = in_order(will_write);
    std::size_t begin = 0;
    std::int64_t elements = 0;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      if (i > begin && elements + tensors[i].numel() > chunk_elements) {
        chunks_.push_back({begin, i});
        begin = i;
        elements = 0;
      }
      elements += tensors[i].numel();
      strides_.push_back(tensors[i].strides().vec());
    }
    if (begin < tensors.size()) chunks_.push_back({begin, tensors.size()});
    for (const auto& chunk : chunks_) kept_.push_back(flat_copy(tensors, chunk));
  }

  // Where the flag is 1, puts the kept values back into `written`: the same
  // tensors in the same order, or in place of a state the step replaced
  // rather than wrote (ftrl's accum), its replacement.
  void put_back_if_skipped(const TensorLists& written) const {
    if (kept_.empty()) return;
    const auto tensors = in_order(written);
    TORCH_CHECK(tensors.size() == strides_.size(), "UndoIfSkipped: the written tensors are not the kept ones (a bug)");
    for (std::size_t i = 0; i < tensors.size(); ++i)
      // A replacement laid out otherwise would be read in another order than the kept values.
      TORCH_CHECK(tensors[i].strides().vec() == strides_[i],
                  "UndoIfSkipped: the written tensors are not laid out as the kept ones (a bug)");
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      auto chosen = flat_copy(tensors, chunks_[c]);
      TORCH_CHECK(chosen.numel() == kept_[c].numel(),
                  "UndoIfSkipped: the written tensors are not the kept ones (a bug)");
      at::where_out(chosen, skipped_, kept_[c], chosen);
      std::vector<at::Tensor> destinations, sources;
      std::int64_t offset = 0;
      for (std::size_t i = chunks_[c].begin; i < chunks_[c].end; ++i) {
        const auto& tensor = tensors[i];
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
  }

 private:
  struct Chunk {
    std::size_t begin, end;  // tensors [begin, end) of the lists, in order
  };

  static std::vector<at::Tensor> in_order(const TensorLists& lists) {
    std::vector<at::Tensor> tensors;
    for (const auto& list : lists) tensors.insert(tensors.end(), list.begin(), list.end());
    return tensors;
  }

  // A dense tensor (contiguous or channels-last) is read and written as its
  // memory, one flat view without a copy; any other in index order.
  static bool in_memory_order(const at::Tensor& tensor) { return tensor.is_non_overlapping_and_dense(); }
  static at::Tensor flat_alias(const at::Tensor& tensor) {
    return tensor.as_strided({tensor.numel()}, {1}, tensor.storage_offset());
  }

  static at::Tensor flat_copy(const std::vector<at::Tensor>& tensors, const Chunk& chunk) {
    std::vector<at::Tensor> flat;
    for (std::size_t i = chunk.begin; i < chunk.end; ++i)
      flat.push_back(in_memory_order(tensors[i]) ? flat_alias(tensors[i]) : tensors[i].reshape({-1}));
    return at::cat(flat);
  }

  at::Tensor skipped_;  // 0-dim bool on the parameters' device
  std::vector<Chunk> chunks_;
  std::vector<at::Tensor> kept_;  // one flat copy a chunk
  std::vector<std::vector<std::int64_t>> strides_;  // each kept tensor's
};

}  // namespace orchestrate::optimizers

// Output tensors of a preprocessing's finish_batch, kept and reused once no
// one holds them any more. A fresh float batch on the CPU is a fresh mapping
// (256x3x224x224 floats are 154 MB, far above glibc's largest mmap threshold,
// 32 MiB), and the kernel zeroes every page of it before finish_batch
// writes it: measured in bench-input on 2 cores, 6 % of the pipeline's time
// in clear_page. Reuse is safe by construction: a tensor is handed out
// again only when the pool's own handle is the last one to it and to its
// storage (no batch, no view of one), and no one can get a new handle but
// from the pool.
//
// CUDA tensors are not kept: LibTorch's caching allocator already reuses
// device memory, in stream order.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <mutex>
#include <vector>

namespace orchestrate {

class BatchOutputPool {
 public:
  // Keeps at most `keep` tensors: about the batches in flight at once
  // (the prefetch window, the training step's, those being finished).
  explicit BatchOutputPool(std::size_t keep = 16) : keep_(keep) {}
  BatchOutputPool(const BatchOutputPool&) = delete;
  BatchOutputPool& operator=(const BatchOutputPool&) = delete;

  // A contiguous tensor of these sizes and options, its values whatever it
  // held before: a kept one no one else holds, or a new one. Safe to call
  // from several threads at once.
  at::Tensor take(at::IntArrayRef sizes, const at::TensorOptions& options) const;

  std::size_t kept() const;

 private:
  const std::size_t keep_;
  mutable std::mutex mutex_;
  mutable std::vector<at::Tensor> kept_;
};

}  // namespace orchestrate

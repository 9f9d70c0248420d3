#include "engine/input/batch_buffer_pool.h"

#include <ATen/ops/empty.h>

namespace orchestrate {

BatchBufferPool::BatchBufferPool(ImageShape shape, bool pinned) : shape_(shape), pinned_(pinned) {}

Batch BatchBufferPool::take(std::int64_t count) {
  {
    const std::lock_guard lock(mutex_);
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->labels.size(0) == count) {
        Batch kept = std::move(*it);
        free_.erase(it);
        return kept;
      }
    ++allocations_;
  }
  const auto options = at::TensorOptions().pinned_memory(pinned_);
  return {at::empty({count, shape_.height, shape_.width, shape_.channels}, options.dtype(at::kByte)),
          at::empty({count}, options.dtype(at::kLong))};
}

void BatchBufferPool::give_back(Batch buffers) {
  // A finished batch (float images, PipelineOptions::finish_on_host) is not
  // a buffer of this pool: it is freed with its last holder.
  if (buffers.images.scalar_type() != at::kByte || buffers.images.dim() != 4) return;
  const std::lock_guard lock(mutex_);
  free_.push_back(std::move(buffers));
}

std::int64_t BatchBufferPool::allocations() const {
  const std::lock_guard lock(mutex_);
  return allocations_;
}

}  // namespace orchestrate

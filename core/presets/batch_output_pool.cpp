#include "batch_output_pool.h"

#include <ATen/ops/empty.h>

namespace orchestrate {

namespace {

bool held_elsewhere(const at::Tensor& kept) { return kept.use_count() > 1 || kept.storage().use_count() > 1; }

}  // namespace

at::Tensor BatchOutputPool::take(at::IntArrayRef sizes, const at::TensorOptions& options) const {
  if (options.device().type() != at::kCPU) return at::empty(sizes, options);
  const std::lock_guard lock(mutex_);
  for (const auto& tensor : kept_)
    if (tensor.sizes() == sizes && tensor.scalar_type() == options.dtype() && !held_elsewhere(tensor))
      return tensor;
  auto fresh = at::empty(sizes, options);
  if (kept_.size() < keep_) {
    kept_.push_back(fresh);
  } else {
    // Full: a free tensor of another shape (the last, smaller batch of an
    // epoch) makes room; otherwise the new one is simply not kept.
    for (auto& tensor : kept_)
      if (!held_elsewhere(tensor)) {
        tensor = fresh;
        break;
      }
  }
  return fresh;
}

std::size_t BatchOutputPool::kept() const {
  const std::lock_guard lock(mutex_);
  return kept_.size();
}

}  // namespace orchestrate

#include "decoded_image_cache.h"

namespace orchestrate::image_folder {

DecodedImageCache::DecodedImageCache(std::size_t images, std::size_t max_bytes)
    : images_(images), max_bytes_(max_bytes) {}

at::Tensor DecodedImageCache::find(std::size_t index) const {
  const std::lock_guard lock(mutex_);
  return images_[index];
}

void DecodedImageCache::offer(std::size_t index, const at::Tensor& pixels) {
  const auto bytes = static_cast<std::size_t>(pixels.nbytes());
  const std::lock_guard lock(mutex_);
  if (images_[index].defined() || used_ + bytes > max_bytes_) return;
  images_[index] = pixels;
  used_ += bytes;
}

std::size_t DecodedImageCache::bytes_used() const {
  const std::lock_guard lock(mutex_);
  return used_;
}

}  // namespace orchestrate::image_folder

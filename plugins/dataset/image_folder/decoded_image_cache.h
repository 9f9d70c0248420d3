// Decoded images kept in memory after their first read (FastNN's
// datasets_use_caching), up to a byte budget. Images are kept as decoded,
// uint8 at their stored size, so a cached read gives exactly the pixels an
// uncached one does. When the budget is spent, later images are not kept
// (nothing is evicted): with shuffled epochs every image is equally likely
// to be read next, so evicting would only trade one miss for another.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <mutex>
#include <vector>

namespace orchestrate::image_folder {

class DecodedImageCache {
 public:
  DecodedImageCache(std::size_t images, std::size_t max_bytes);

  // The image at `index`, or an undefined tensor when it is not kept.
  at::Tensor find(std::size_t index) const;
  // Keeps `pixels` (uint8, contiguous) when the budget allows. Safe to call
  // from several pipeline threads at once.
  void offer(std::size_t index, const at::Tensor& pixels);

  std::size_t bytes_used() const;

 private:
  mutable std::mutex mutex_;
  std::vector<at::Tensor> images_;
  std::size_t max_bytes_;
  std::size_t used_ = 0;
};

}  // namespace orchestrate::image_folder

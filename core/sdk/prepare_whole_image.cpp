#include "orchestrate/decode_window.h"
#include "orchestrate/preprocessing.h"

namespace orchestrate {

at::Tensor prepare_whole_image(const Preprocessing& preprocessing, const at::Tensor& pixels, std::uint64_t seed) {
  const DecodeWindow window = preprocessing.decode_window(pixels.size(0), pixels.size(1), seed);
  check_window(window, pixels.size(0), pixels.size(1));
  const bool whole = window.height == pixels.size(0) && window.width == pixels.size(1);
  return preprocessing.prepare_sample(
      whole ? pixels : pixels.narrow(0, window.top, window.height).narrow(1, window.left, window.width).contiguous(),
      seed);
}

}  // namespace orchestrate

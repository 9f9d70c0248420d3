// The part of a stored image that a sample is made from, chosen by the
// preprocessing from the image's size alone, before any pixel is decoded
// (Preprocessing::decode_window): a random crop's box, or the whole image.
// A dataset that decodes JPEG hands the choice to the decoder
// (orchestrate/image/image_decode.h), which then decodes only the window's
// rows and columns, at the smallest DCT scale that keeps it at least
// min_side: DALI's decoders.image_random_crop, FFCV's crop decoder. Free of
// LibTorch, so the fuzz build reads it too.
#pragma once

#include <cstdint>
#include <functional>

#include "orchestrate/api.h"

namespace orchestrate {

struct DecodeWindow {
  // In the stored image's pixels; inside it, each side at least 1.
  std::int64_t top = 0;
  std::int64_t left = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  // The window's pixels may come at a reduced scale as long as both of its
  // sides stay at least this (0: at full scale). A random crop resized to
  // 224 x 224 loses nothing when its window is decoded at 224 or more.
  std::int64_t min_side = 0;
};

// All of an image of height x width.
inline DecodeWindow whole_image(std::int64_t height, std::int64_t width, std::int64_t min_side = 0) {
  return {0, 0, height, width, min_side};
}

// Given a stored image's height and width, the window to decode.
using ChooseWindow = std::function<DecodeWindow(std::int64_t height, std::int64_t width)>;

// Chooses the whole image, at a reduced scale where both of its sides stay
// at least min_side (0, or an empty chooser: full scale).
inline ChooseWindow whole_image_chooser(std::int64_t min_side) {
  if (min_side <= 0) return {};
  return [min_side](std::int64_t height, std::int64_t width) { return whole_image(height, width, min_side); };
}

// Throws orchestrate::Error when `window` does not lie inside an image of
// height x width with both sides at least 1, or min_side is negative: a
// preprocessing plugin's bug, named before it reads out of bounds.
ORCHESTRATE_API void check_window(const DecodeWindow& window, std::int64_t height, std::int64_t width);

}  // namespace orchestrate

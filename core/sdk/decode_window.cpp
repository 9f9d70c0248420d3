#include "orchestrate/decode_window.h"

#include <string>

#include "orchestrate/error.h"

namespace orchestrate {

void check_window(const DecodeWindow& w, std::int64_t height, std::int64_t width) {
  const bool inside = w.top >= 0 && w.left >= 0 && w.height >= 1 && w.width >= 1 && w.top <= height - w.height &&
                      w.left <= width - w.width && w.min_side >= 0;
  if (!inside)
    throw Error("[preprocessing] chose the decode window " + std::to_string(w.height) + "x" + std::to_string(w.width) +
                " at (" + std::to_string(w.top) + ", " + std::to_string(w.left) + "), min_side " +
                std::to_string(w.min_side) + ", which is not inside the " + std::to_string(height) + "x" +
                std::to_string(width) + " image (a plugin bug)");
}

}  // namespace orchestrate

// Wall-clock seconds on the steady clock, as the step timings and events count them.
#pragma once

#include <chrono>

namespace orchestrate {

inline double seconds_between(std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return seconds_between(start, std::chrono::steady_clock::now());
}

}  // namespace orchestrate

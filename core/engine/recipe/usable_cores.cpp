#include "engine/recipe/usable_cores.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace orchestrate {

int usable_cores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) return std::max(1, CPU_COUNT(&mask));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace orchestrate

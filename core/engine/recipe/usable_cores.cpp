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

std::vector<int> usable_core_ids() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  std::vector<int> ids;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &mask)) ids.push_back(cpu);
  if (ids.empty()) ids.push_back(0);
  return ids;
}

}  // namespace orchestrate

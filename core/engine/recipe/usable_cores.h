// The cores this process may run on: its CPU affinity mask (a container's
// or taskset's cpuset), which hardware_concurrency() ignores.
#pragma once

#include <vector>

namespace orchestrate {

int usable_cores();

// Their CPU ids, in order; {0} when the mask cannot be read.
std::vector<int> usable_core_ids();

}  // namespace orchestrate

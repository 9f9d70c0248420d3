// The cores this process may run on: its CPU affinity mask (a container's
// or taskset's cpuset), which hardware_concurrency() ignores.
#pragma once

namespace orchestrate {

int usable_cores();

}  // namespace orchestrate

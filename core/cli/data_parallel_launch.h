// `orchestrate run --nproc N`: the command runs itself as N data-parallel
// workers on this machine, the way torchrun would start it.
#pragma once

#include <string>
#include <vector>

namespace orchestrate::cli {

// --nproc must be at least 1, and above 1 only where no launcher (torchrun,
// srun, mpirun) has started this process as one of several already; a
// UsageError otherwise.
void check_nproc(int nproc);

// Runs `orchestrate run <run_arguments>` (which must not hold --nproc) as
// nproc workers, their output prefixed with their rank, and returns the exit
// code of the first that failed, 0 when all succeed.
int run_local_workers(int nproc, const std::vector<std::string>& run_arguments);

}  // namespace orchestrate::cli

#include "cli/data_parallel_launch.h"

#include <iostream>

#include "distributed/launch_environment.h"
#include "distributed/worker_supervisor.h"
#include "orchestrate/error.h"

namespace orchestrate::cli {

void check_nproc(int nproc) {
  if (nproc < 1)
    throw UsageError("run: --nproc " + std::to_string(nproc) +
                     " is not a number of processes; give --nproc N with N >= 1 (default 1: train in this process)");
  if (nproc == 1) return;
  const LaunchEnvironment launched = read_launch_environment();
  if (launched.distributed())
    throw UsageError("run: --nproc " + std::to_string(nproc) + " but this process is already rank " +
                     std::to_string(launched.rank) + " of " + std::to_string(launched.world_size) +
                     " launched by " + launched.launcher + "; drop --nproc (" + launched.launcher +
                     " starts the processes) or run without " + launched.launcher);
}

int run_local_workers(int nproc, const std::vector<std::string>& run_arguments) {
  WorkerLaunch launch;
  // The very executable running now, even if its file was replaced since.
  launch.argv = {"/proc/self/exe", "run"};
  launch.argv.insert(launch.argv.end(), run_arguments.begin(), run_arguments.end());
  launch.nproc = nproc;
  std::cout.flush();
  return supervise_workers(launch, std::cout, std::cerr);
}

}  // namespace orchestrate::cli

// Who this process is in a data-parallel job and where its rendezvous is, read
// from the variables a launcher sets for every process it starts: torchrun (and
// `orchestrate run --nproc`, which sets the same ones), Slurm's srun, or Open
// MPI's mpirun. Reading them is all this does; joining the job is the
// collective engine's business.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace orchestrate {

struct LaunchEnvironment {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string launcher = "none";  // "none", "orchestrate" (--nproc), "torchrun", "slurm", "mpirun"
  bool distributed() const { return world_size > 1; }
};

// The value of an environment variable, nullopt when it is not set. Tests pass
// a map; the process's own environment is the overload below. An empty value
// counts as not set.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The first launcher whose variables are set wins:
//  1. RANK, WORLD_SIZE (both required), LOCAL_RANK and LOCAL_WORLD_SIZE (default:
//     RANK and WORLD_SIZE, i.e. one node), MASTER_ADDR, MASTER_PORT: launcher
//     "torchrun", or "orchestrate" when ORCHESTRATE_LAUNCHER=orchestrate too;
//  2. SLURM_PROCID with SLURM_NTASKS, SLURM_LOCALID, the tasks on this node
//     (SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE or SLURM_NTASKS_PER_NODE),
//     and as master the first host of SLURM_JOB_NODELIST (or SLURM_NODELIST);
//  3. OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE.
// MASTER_ADDR and MASTER_PORT override what a launcher implies. Without
// MASTER_ADDR the master is 127.0.0.1, which only works when every rank runs on
// this node, so ranks spread over several nodes without it (and no host list)
// are an error. Nothing set: one process, launcher "none". A value that is not
// a non-negative integer, a rank outside 0..size-1, a port outside 1..65535 or
// half a launcher's variables is a UsageError naming the variable, its value
// and the fix.
LaunchEnvironment read_launch_environment(const EnvironmentLookup& lookup);
LaunchEnvironment read_launch_environment();  // from this process's environment

}  // namespace orchestrate

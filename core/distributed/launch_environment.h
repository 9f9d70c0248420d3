// Who this process is in a data-parallel job, and where its rendezvous is.
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

}  // namespace orchestrate

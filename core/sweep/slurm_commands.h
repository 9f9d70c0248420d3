// Slurm's client commands (sbatch, squeue, scancel), run as child processes
// with their output read back: the sweep talks to Slurm as its users do,
// through the commands, so it works with whatever Slurm the cluster runs
// (SLURM_CONF and the cluster's defaults included).
#pragma once

#include <string>
#include <vector>

namespace orchestrate::sweep {

struct CommandOutput {
  int exit_code = 0;
  std::string out;
  std::string err;
};

// Runs `command` (found on PATH) with `arguments`. Throws Error when it is
// not on PATH, naming what to install.
CommandOutput run_slurm_command(const std::string& command, const std::vector<std::string>& arguments);

// The last non-empty line of `text`, for a one-line message.
std::string last_line(const std::string& text);

}  // namespace orchestrate::sweep

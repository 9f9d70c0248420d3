// SIGINT, SIGTERM and SIGUSR1 handling for a graceful stop: the first signal
// asks the trainer to finish its current step, save a checkpoint and record
// the run as interrupted; a second one kills the process the usual way.
// SIGUSR1 is what SLURM sends before a job's time limit (sbatch
// --signal=USR1@90), as Lightning's SLURM support expects it.
#pragma once

#include <string>

namespace orchestrate {

// "SIGINT (Ctrl-C)", "SIGTERM", "SIGUSR1 (a batch system's warning ...)": for the run's event.
std::string stop_signal_name(int signal_number);

class StopSignal {
 public:
  StopSignal();   // installs the handlers
  ~StopSignal();  // restores the previous ones
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  bool requested() const;
  int signal_number() const;  // which signal asked, 0 if none
};

}  // namespace orchestrate

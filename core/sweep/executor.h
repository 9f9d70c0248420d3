// What runs a sweep's trials: a job is one trial's command line with its
// stdout and stderr files, and an executor runs a list of them, so many at
// a time, reporting each as it ends. LocalExecutor runs them on this
// machine's cores and GPUs; SlurmExecutor as one Slurm job array. The
// controller (sweep_controller.h) drives either the same way.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace orchestrate::sweep {

// How long `sweep --resume` waits for what a killed controller left running
// (its trials' runs, or its Slurm array) to save and end. share/doc/limits.md.
inline constexpr std::chrono::seconds kWaitForOrphans{60};

struct Job {
  std::int64_t trial = 0;
  std::string program;
  std::vector<std::string> arguments;
  std::string stdout_path;
  std::string stderr_path;
};

struct Finished {
  const Job* job = nullptr;
  int exit_code = 0;  // 128 + signal when a signal ended it; -1 when it could not start or was lost
  double seconds = 0;
  int still_running = 0;  // the other jobs running as it ended
};

class Executor {
 public:
  virtual ~Executor() = default;

  // Runs every job, in order, as many at once as the executor allows;
  // `on_finished` after each one ends, `on_tick` about once a second with
  // the jobs running (both from this thread). Once `stop()` returns true,
  // each running job gets one SIGINT (it saves and ends as interrupted) and
  // the rest never start; a job that never started is not reported. Returns
  // when every job that started has ended.
  virtual void run(const std::vector<Job>& jobs, const std::function<void(const Finished&)>& on_finished,
                   const std::function<void(int running)>& on_tick, const std::function<bool()>& stop) = 0;

  // From a callback of run(): the job of `trial`, if running, gets one
  // SIGINT (an early-stopped trial ends as a Ctrl-C'd run does, saved).
  virtual void interrupt(std::int64_t trial) = 0;

  // Jobs that run at once, at most: for the sweep's ETA.
  virtual int slots() const = 0;

  // Before a sweep is taken up (`sweep --resume`): the jobs a killed
  // controller left get their SIGINT, where nothing else sent it.
  virtual void interrupt_orphans() {}

  // Whether each trial records in a store file of its own (a cluster's
  // nodes share no SQLite safely), which the controller imports when the
  // trial ends, rather than in the sweep's store.
  virtual bool trial_stores() const { return false; }
};

}  // namespace orchestrate::sweep

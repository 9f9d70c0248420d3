// Runs a sweep's trials as one Slurm job array: task i runs job i's command
// line, so many at a time as the array's %N and the cluster allow, each
// with the trial's cores (--cpus-per-task) and GPUs (--gres=gpu:N). Slurm
// schedules; this only submits (sbatch), watches (squeue) and signals
// (scancel), as a user at the terminal would. The cluster's nodes share the
// sweep's directory (a shared file system, as Slurm itself assumes), and
// each trial writes a run store of its own there (SQLite is not safe for
// writers on several hosts), which the controller imports when it ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sweep/executor.h"
#include "sweep/sweep_spec.h"

namespace orchestrate::sweep {

struct SlurmArrayShape {
  std::string name;         // the array's --job-name
  std::string work_dir;     // absolute, on the shared file system: scripts, task files, Slurm's output
  int concurrency = 1;      // tasks at once: the array's %N
  int cpus_per_task = 1;
  int gpus_per_task = 0;
  SlurmSettings settings;   // partition, time, further sbatch options
};

class SlurmExecutor : public Executor {
 public:
  explicit SlurmExecutor(SlurmArrayShape shape) : shape_(std::move(shape)) {}

  // One array for all the jobs, in <work_dir>/array-<k>/: the batch script,
  // each task's command line (task-<i>.args), its exit code once it ends
  // (task-<i>.exit) and Slurm's own output (slurm-<job>_<i>.out). Stopping
  // cancels the tasks still pending and sends the running ones' batch shells
  // one SIGINT (scancel --batch), which each passes on to its trial once. A
  // task that leaves the queue without an exit code (scancel'd by hand, past
  // its time limit, its node lost) ends with -1 and a line in its stderr
  // file that says so.
  void run(const std::vector<Job>& jobs, const std::function<void(const Finished&)>& on_finished,
           const std::function<void(int running)>& on_tick, const std::function<bool()>& stop) override;
  void interrupt(std::int64_t trial) override { to_interrupt_.insert(trial); }
  int slots() const override { return shape_.concurrency; }
  // The array a killed controller left (its id is kept in <work_dir>/job-id):
  // pending tasks cancelled, running ones sent SIGINT; waits until it has
  // left the queue.
  void interrupt_orphans() override;
  bool trial_stores() const override { return true; }

 private:
  std::string submit(const std::vector<Job>& jobs, const std::string& array_dir);
  void stop_array(const std::string& job_id) const;

  SlurmArrayShape shape_;
  std::set<std::int64_t> to_interrupt_;
};

}  // namespace orchestrate::sweep

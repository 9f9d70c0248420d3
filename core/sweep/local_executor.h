// Runs a sweep's trials side by side on this machine: `concurrency` slots,
// each pinned to its own cores (CPU affinity, set in the child before it
// executes, and OMP_NUM_THREADS) and GPUs (CUDA_VISIBLE_DEVICES), so trials
// never share a core or a device and never oversubscribe the machine. A
// trial is any command line (`orchestrate-engine run ...`); its stdout and
// stderr go to files. Boost.Process starts and watches the children.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace orchestrate::sweep {

struct Job {
  std::int64_t trial = 0;
  std::string program;
  std::vector<std::string> arguments;
  std::string stdout_path;
  std::string stderr_path;
};

struct Slot {
  std::vector<int> cores;  // CPU ids it is pinned to
  std::vector<int> gpus;   // device ids it sees, as CUDA_VISIBLE_DEVICES
};

struct Finished {
  const Job* job = nullptr;
  int exit_code = 0;  // 128 + signal when a signal ended it; -1 when it could not start
  double seconds = 0;
  int still_running = 0;  // the other jobs running as it ended
};

// The slots a machine affords: `concurrency` of them, each with `cores_per_slot`
// of the cores this process may run on (sched_getaffinity) and `gpus_per_slot`
// of `gpus` devices, in order. Throws Error when they do not fit.
std::vector<Slot> machine_slots(int concurrency, int cores_per_slot, int gpus_per_slot, int gpus);

class LocalExecutor {
 public:
  explicit LocalExecutor(std::vector<Slot> slots) : slots_(std::move(slots)) {}

  // Runs every job, at most one per slot at a time, in order; `on_finished`
  // after each one ends (from this thread), `on_tick` about once a second
  // with the jobs running. Once `stop()` returns true, each running job gets
  // one SIGINT (jobs run in process groups of their own, out of the
  // terminal's reach) and the rest never start; returns when all that
  // started have ended.
  // A job's process dies with this one: if the sweep's controller is killed,
  // each running job gets one SIGINT (PR_SET_PDEATHSIG), saves and ends as
  // interrupted, to be resumed by `sweep --resume`.
  void run(const std::vector<Job>& jobs, const std::function<void(const Finished&)>& on_finished,
           const std::function<void(int running)>& on_tick, const std::function<bool()>& stop);

  // From a callback of run(): the job of `trial`, if running, gets one SIGINT
  // (an early-stopped trial ends as a Ctrl-C'd run does, saved).
  void interrupt(std::int64_t trial) { to_interrupt_.insert(trial); }

 private:
  std::vector<Slot> slots_;
  std::set<std::int64_t> to_interrupt_;
};

}  // namespace orchestrate::sweep

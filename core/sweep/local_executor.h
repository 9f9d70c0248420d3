// Runs a sweep's trials side by side on this machine: `concurrency` slots,
// each pinned to its own cores (CPU affinity, set in the child before it
// executes, and OMP_NUM_THREADS) and GPUs (CUDA_VISIBLE_DEVICES), so trials
// never share a core or a device and never oversubscribe the machine. A
// trial is any command line (`orchestrate-engine run ...`); its stdout and
// stderr go to files. Boost.Process starts and watches the children.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "sweep/executor.h"

namespace orchestrate::sweep {

struct Slot {
  std::vector<int> cores;  // CPU ids it is pinned to
  std::vector<int> gpus;   // device ids it sees, as CUDA_VISIBLE_DEVICES
};

// The slots a machine affords: `concurrency` of them, each with `cores_per_slot`
// of the cores this process may run on (sched_getaffinity) and `gpus_per_slot`
// of `gpus` devices, in order. Throws Error when they do not fit.
std::vector<Slot> machine_slots(int concurrency, int cores_per_slot, int gpus_per_slot, int gpus);

class LocalExecutor : public Executor {
 public:
  explicit LocalExecutor(std::vector<Slot> slots) : slots_(std::move(slots)) {}

  // At most one job per slot at a time. Jobs run in process groups of
  // their own, out of the terminal's reach, and die with this process: if
  // the sweep's controller is killed, each running job gets one SIGINT
  // (PR_SET_PDEATHSIG), saves and ends as interrupted, to be resumed by
  // `sweep --resume`.
  void run(const std::vector<Job>& jobs, const std::function<void(const Finished&)>& on_finished,
           const std::function<void(int running)>& on_tick, const std::function<bool()>& stop) override;
  void interrupt(std::int64_t trial) override { to_interrupt_.insert(trial); }
  int slots() const override { return static_cast<int>(slots_.size()); }

 private:
  std::vector<Slot> slots_;
  std::set<std::int64_t> to_interrupt_;
};

}  // namespace orchestrate::sweep

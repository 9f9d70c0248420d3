#include "sweep/local_executor.h"

#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "engine/recipe/usable_cores.h"
#include "orchestrate/error.h"

namespace bp = boost::process;

namespace orchestrate::sweep {

namespace {

std::string joined(const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

// Between fork and exec: pins the child to its slot's cores, so that not one
// of its threads starts elsewhere, and gives it a process group of its own,
// so that a Ctrl-C at the terminal reaches the sweep alone, which passes it
// on to each trial once (a second SIGINT would kill a run before it saves).
// Should the sweep die (kill -9), the child gets that SIGINT from the kernel;
// one whose parent died before it asked sends it to itself.
struct PinToCores {
  cpu_set_t mask;
  pid_t parent;
  template <class Executor>
  void operator()(Executor&) const {
    sched_setaffinity(0, sizeof mask, &mask);
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGINT);
    if (getppid() != parent) raise(SIGINT);
  }
};

struct Running {
  const Job* job;
  std::size_t slot;
  std::unique_ptr<bp::child> child;
  std::chrono::steady_clock::time_point started;
  bool interrupted = false;
};

}  // namespace

std::vector<Slot> machine_slots(int concurrency, int cores_per_slot, int gpus_per_slot, int gpus) {
  const std::vector<int> cores = usable_core_ids();
  if (static_cast<std::size_t>(concurrency) * cores_per_slot > cores.size())
    throw Error("concurrency " + std::to_string(concurrency) + " x " + std::to_string(cores_per_slot) +
                " cores is more than the " + std::to_string(cores.size()) + " this process may use");
  if (concurrency * gpus_per_slot > gpus)
    throw Error("concurrency " + std::to_string(concurrency) + " x " + std::to_string(gpus_per_slot) +
                " GPUs is more than the " + std::to_string(gpus) + " here");
  std::vector<Slot> slots(concurrency);
  for (int s = 0; s < concurrency; ++s) {
    for (int c = 0; c < cores_per_slot; ++c) slots[s].cores.push_back(cores[s * cores_per_slot + c]);
    for (int g = 0; g < gpus_per_slot; ++g) slots[s].gpus.push_back(s * gpus_per_slot + g);
  }
  return slots;
}

void LocalExecutor::run(const std::vector<Job>& jobs, const std::function<void(const Finished&)>& on_finished,
                        const std::function<void(int running)>& on_tick, const std::function<bool()>& stop) {
  std::vector<std::optional<Running>> busy(slots_.size());
  std::size_t next = 0;
  bool passed_on = false;  // the stop, to the running jobs
  auto last_tick = std::chrono::steady_clock::now();
  for (;;) {
    const bool stopping = stop();
    if (stopping && !passed_on) {
      passed_on = true;
      for (auto& job : busy)
        if (job && !job->interrupted) {
          ::kill(job->child->id(), SIGINT);  // each run finishes its step and saves, as on a Ctrl-C
          job->interrupted = true;
        }
    }
    for (auto& job : busy)
      if (job && !job->interrupted && to_interrupt_.count(job->job->trial)) {
        ::kill(job->child->id(), SIGINT);
        job->interrupted = true;
      }
    int running = 0;
    for (std::size_t s = 0; s < busy.size(); ++s) {
      if (busy[s] && !busy[s]->child->running()) {
        const int native = busy[s]->child->native_exit_code();
        Finished finished{busy[s]->job,
                          WIFSIGNALED(native) ? 128 + WTERMSIG(native) : busy[s]->child->exit_code(),
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - busy[s]->started).count()};
        busy[s].reset();
        for (const auto& other : busy) finished.still_running += other.has_value();
        on_finished(finished);
      }
      if (!busy[s] && next < jobs.size() && !stop()) {  // asked again: a job that just ended may have asked to stop
        const Job& job = jobs[next++];
        const Slot& slot = slots_[s];
        PinToCores pin{};
        pin.parent = getpid();
        CPU_ZERO(&pin.mask);
        for (int core : slot.cores) CPU_SET(core, &pin.mask);
        bp::environment env = boost::this_process::environment();
        env["OMP_NUM_THREADS"] = std::to_string(slot.cores.size());
        if (!slot.gpus.empty()) env["CUDA_VISIBLE_DEVICES"] = joined(slot.gpus);
        std::error_code error;
        auto child = std::make_unique<bp::child>(
            bp::exe = job.program, bp::args = job.arguments, bp::std_in < bp::null, bp::std_out > job.stdout_path,
            bp::std_err > job.stderr_path, env, bp::extend::on_exec_setup = pin, error);
        if (error) {
          Finished failed{&job, -1, 0, 0};
          for (const auto& other : busy) failed.still_running += other.has_value();
          on_finished(failed);
        } else {
          busy[s] = Running{&job, s, std::move(child), std::chrono::steady_clock::now()};
        }
      }
      running += busy[s].has_value();
    }
    if (running == 0 && (next >= jobs.size() || stopping)) return;
    if (std::chrono::steady_clock::now() - last_tick >= std::chrono::seconds(1)) {
      last_tick = std::chrono::steady_clock::now();
      on_tick(running);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace orchestrate::sweep

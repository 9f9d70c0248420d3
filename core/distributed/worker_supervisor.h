// Starts the processes of a data-parallel job on this machine and watches
// them, as torchrun does for Python: `orchestrate run --nproc N`.
#pragma once

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

namespace orchestrate {

struct WorkerLaunch {
  std::vector<std::string> argv;           // argv[0] = executable path; run as is for every worker
  int nproc = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;                     // 0: pick a free TCP port on master_addr
  std::chrono::milliseconds grace{10000};  // after the first failure: SIGTERM to the rest, SIGKILL after this
};

// Starts nproc copies of argv, each with RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and ORCHESTRATE_LAUNCHER=orchestrate
// in its environment (the rest inherited), and supervises them:
//  - every line a worker writes to stdout or stderr goes to `out` or `err`
//    prefixed with "[rank N] ", whole lines only;
//  - when a worker exits non-zero or by a signal, a line on `err` names it and
//    the others get SIGTERM, then SIGKILL after `grace`;
//  - stop signals: the workers stay in the supervisor's process group, so a
//    Ctrl-C at the terminal (or its hangup) reaches each of them from the
//    kernel; the supervisor then only waits, since a second SIGINT would turn
//    a worker's graceful stop into an immediate one. A SIGINT or SIGTERM sent
//    to the supervisor alone (kill PID, a scheduler, a container runtime) is
//    forwarded to every worker. Either way the workers are then left to finish
//    (no SIGTERM when one of them exits first, no SIGKILL): stopping cleanly is
//    theirs to do, and a second Ctrl-C ends them at once. A signal sent to the
//    whole group by a process (kill -- -PGID, timeout(1)) reaches a worker
//    twice, once from the sender and once forwarded: signal the supervisor's
//    PID instead.
// Returns the exit code of the first worker that failed (128 + the signal
// number if a signal ended it), 0 when all succeed. A worker that cannot be
// started is an Error (the ones already started are killed).
int supervise_workers(const WorkerLaunch& launch, std::ostream& out, std::ostream& err);

}  // namespace orchestrate

// The signals a worker supervisor listens to, turned into bytes on a pipe so
// its poll() loop sees them beside the workers' output (the self-pipe trick):
// SIGCHLD (a worker may have exited) and SIGINT/SIGTERM (stop the workers).
#pragma once

#include <csignal>
#include <vector>

namespace orchestrate {

struct ReceivedSignal {
  int number = 0;
  // Sent by the kernel rather than by kill(2): a terminal's Ctrl-C or hangup,
  // which the kernel sends to the whole foreground process group at once.
  bool from_terminal = false;
};

class SupervisorSignals {
 public:
  // Installs the handlers; SIGINT or SIGTERM that this process ignores (nohup,
  // a background job of a script) stay ignored. One instance at a time.
  SupervisorSignals();
  ~SupervisorSignals();  // restores the previous handlers
  SupervisorSignals(const SupervisorSignals&) = delete;
  SupervisorSignals& operator=(const SupervisorSignals&) = delete;

  // Readable when a signal arrived; poll() it.
  int wake_fd() const { return pipe_[0]; }
  // The signals received since the last call (SIGCHLD included).
  std::vector<ReceivedSignal> take();
  // The signals whose handling this object changed: a child must start with
  // them at their default action (and with `original_mask` blocked), not with
  // a disposition meant for the supervisor.
  const sigset_t& changed() const { return changed_; }
  const sigset_t& original_mask() const { return original_mask_; }

 private:
  int pipe_[2] = {-1, -1};
  sigset_t changed_;
  sigset_t original_mask_;
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
  struct sigaction previous_usr1_ {};
  struct sigaction previous_chld_ {};
};

}  // namespace orchestrate

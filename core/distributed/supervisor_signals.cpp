#include "distributed/supervisor_signals.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// A signal handler can only reach the program through a global; this one is
// the write end of the current instance's pipe, -1 when there is none.
volatile std::sig_atomic_t g_wake_fd = -1;

void on_signal(int number, siginfo_t* info, void*) {
  const int saved_errno = errno;
  // Two bytes per signal; a write of at most PIPE_BUF bytes is atomic, so the
  // reader never sees half a record. A full pipe drops it, which only happens
  // after thousands of unread signals.
  const unsigned char record[2] = {static_cast<unsigned char>(number),
                                   static_cast<unsigned char>(info && info->si_code == SI_KERNEL)};
  if (const int fd = g_wake_fd; fd >= 0) {
    [[maybe_unused]] const ssize_t written = ::write(fd, record, sizeof record);
  }
  errno = saved_errno;
}

void install(int number, struct sigaction& previous, sigset_t& changed) {
  struct sigaction action {};
  action.sa_sigaction = on_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART | (number == SIGCHLD ? SA_NOCLDSTOP : 0);
  sigemptyset(&action.sa_mask);
  sigaction(number, &action, &previous);
  sigaddset(&changed, number);
}

bool ignored(int number) {
  struct sigaction current {};
  sigaction(number, nullptr, &current);
  return !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN;
}

}  // namespace

SupervisorSignals::SupervisorSignals() {
  if (g_wake_fd != -1) throw Error("internal: a second worker supervisor in one process; supervise one job at a time");
  if (::pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0)
    throw Error(std::string("cannot create the supervisor's signal pipe: ") + std::strerror(errno));
  g_wake_fd = pipe_[1];
  sigemptyset(&changed_);
  pthread_sigmask(SIG_SETMASK, nullptr, &original_mask_);
  // SIGCHLD always: an ignored SIGCHLD would make the kernel reap the workers
  // before waitpid() could read their exit status.
  install(SIGCHLD, previous_chld_, changed_);
  if (!ignored(SIGINT)) install(SIGINT, previous_int_, changed_);
  if (!ignored(SIGTERM)) install(SIGTERM, previous_term_, changed_);
  if (!ignored(SIGUSR1)) install(SIGUSR1, previous_usr1_, changed_);  // a batch system's time-limit warning
}

SupervisorSignals::~SupervisorSignals() {
  if (sigismember(&changed_, SIGINT)) sigaction(SIGINT, &previous_int_, nullptr);
  if (sigismember(&changed_, SIGTERM)) sigaction(SIGTERM, &previous_term_, nullptr);
  if (sigismember(&changed_, SIGUSR1)) sigaction(SIGUSR1, &previous_usr1_, nullptr);
  sigaction(SIGCHLD, &previous_chld_, nullptr);
  g_wake_fd = -1;
  ::close(pipe_[0]);
  ::close(pipe_[1]);
}

std::vector<ReceivedSignal> SupervisorSignals::take() {
  std::vector<ReceivedSignal> received;
  unsigned char records[256];
  ssize_t n;
  while ((n = ::read(pipe_[0], records, sizeof records)) > 0 || (n < 0 && errno == EINTR))
    for (ssize_t i = 0; i + 1 < n; i += 2) received.push_back({records[i], records[i + 1] != 0});
  return received;
}

}  // namespace orchestrate

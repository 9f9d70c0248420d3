// Plain POSIX (posix_spawn, pipes, poll, waitpid) rather than Boost.Process:
// Boost.Process v1 (Boost 1.74) can only SIGKILL a child (terminate()), not
// send it SIGTERM first; it gives no say over the signal mask and dispositions
// a child starts with; and its asynchronous pipes and exit notification would
// need an Asio loop plus a signal_set beside them for what one poll() over the
// pipes and a self-pipe does here. Splitting output into whole lines is ours
// either way.
#include "distributed/worker_supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>

#include "distributed/free_tcp_port.h"
#include "distributed/prefixed_lines.h"
#include "distributed/supervisor_signals.h"
#include "orchestrate/error.h"

extern char** environ;

namespace orchestrate {

namespace {

using Clock = std::chrono::steady_clock;

// Between checks of the workers even when no signal woke us: a safety net, the
// self-pipe wakes us at once.
constexpr std::chrono::milliseconds kPollInterval{500};

constexpr std::array<std::string_view, 7> kLaunchVariables{
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "ORCHESTRATE_LAUNCHER"};

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// This process's environment without the launch variables, then the worker's own.
std::vector<std::string> worker_environment(int rank, const WorkerLaunch& launch, int port) {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    if (std::find(kLaunchVariables.begin(), kLaunchVariables.end(), name) == kLaunchVariables.end())
      environment.emplace_back(text);
  }
  const std::string nproc = std::to_string(launch.nproc);
  for (const std::string& variable :
       {"RANK=" + std::to_string(rank), "WORLD_SIZE=" + nproc, "LOCAL_RANK=" + std::to_string(rank),
        "LOCAL_WORLD_SIZE=" + nproc, "MASTER_ADDR=" + launch.master_addr, "MASTER_PORT=" + std::to_string(port),
        std::string("ORCHESTRATE_LAUNCHER=orchestrate")})
    environment.push_back(variable);
  return environment;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

int exit_code(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

std::string describe_exit(int status) {
  if (!WIFSIGNALED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  const int signal = WTERMSIG(status);
  const char* name = sigabbrev_np(signal);
  return "was killed by signal " + std::to_string(signal) + (name ? " (SIG" + std::string(name) + ")" : "");
}

// One started worker: its process, the read ends of its stdout and stderr
// pipes, and how it ended.
struct Worker {
  int rank = 0;
  pid_t pid = -1;
  std::array<int, 2> fds{-1, -1};
  std::array<std::unique_ptr<PrefixedLines>, 2> lines;
  bool running = false;
  int status = 0;

  // Reads what `fds[stream]` has now; closes it at its end.
  void read_output(int stream) {
    char buffer[65536];
    while (fds[stream] >= 0) {
      const ssize_t n = ::read(fds[stream], buffer, sizeof buffer);
      if (n > 0) {
        lines[stream]->write({buffer, static_cast<std::size_t>(n)});
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && errno == EAGAIN) {
        return;
      } else {
        close_output(stream);
      }
    }
  }

  void close_output(int stream) {
    lines[stream]->finish();
    ::close(fds[stream]);
    fds[stream] = -1;
  }
};

// The workers of one job. Whatever happens to the supervisor (an exception
// included), none of them outlives it unreaped.
class WorkerGroup {
 public:
  WorkerGroup(const WorkerLaunch& launch, const SupervisorSignals& signals) : launch_(launch), signals_(signals) {}
  ~WorkerGroup() {
    for (auto& worker : workers_) {
      if (worker.running) {
        ::kill(worker.pid, SIGKILL);
        while (::waitpid(worker.pid, nullptr, 0) < 0 && errno == EINTR) {
        }
      }
      for (int fd : worker.fds)
        if (fd >= 0) ::close(fd);
    }
  }
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  std::vector<Worker>& workers() { return workers_; }

  void start(int rank, int port, std::ostream& out, std::ostream& err) {
    Worker& worker = workers_.emplace_back();
    worker.rank = rank;
    const std::string prefix = "[rank " + std::to_string(rank) + "] ";
    worker.lines[0] = std::make_unique<PrefixedLines>(prefix, out);
    worker.lines[1] = std::make_unique<PrefixedLines>(prefix, err);
    std::array<int, 2> write_ends{-1, -1};
    for (int stream : {0, 1}) {
      int ends[2];
      // Close-on-exec, so no worker inherits another's pipe and every pipe
      // ends when its own worker does.
      if (::pipe2(ends, O_CLOEXEC) != 0) {
        const std::string message = system_error("cannot create a pipe for worker " + std::to_string(rank));
        if (write_ends[0] >= 0) ::close(write_ends[0]);
        throw Error(message);
      }
      worker.fds[stream] = ends[0];
      write_ends[stream] = ends[1];
      ::fcntl(ends[0], F_SETFL, ::fcntl(ends[0], F_GETFL) | O_NONBLOCK);
    }
    const int spawned = spawn(worker, port, write_ends);
    for (int fd : write_ends) ::close(fd);
    if (spawned != 0)
      throw Error("cannot start worker " + std::to_string(rank) + ": " + launch_.argv.front() + ": " +
                  std::strerror(spawned) + "; check the executable path");
    worker.running = true;
  }

 private:
  // posix_spawn: the child gets the pipes as stdout and stderr, the signal
  // mask this process had before the supervisor touched anything, and the
  // default action for each signal the supervisor handles (SIG_IGN would
  // otherwise survive exec; an inherited SIGINT of a nohup'ed supervisor stays
  // ignored, as a shell would leave it). No POSIX_SPAWN_SETPGROUP: the child
  // stays in our process group, so the terminal's Ctrl-C reaches it.
  int spawn(Worker& worker, int port, const std::array<int, 2>& write_ends) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, write_ends[0], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, write_ends[1], STDERR_FILENO);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setsigmask(&attributes, &signals_.original_mask());
    posix_spawnattr_setsigdefault(&attributes, &signals_.changed());
    std::vector<std::string> argv = launch_.argv;
    std::vector<std::string> environment = worker_environment(worker.rank, launch_, port);
    const int result = ::posix_spawn(&worker.pid, argv.front().c_str(), &actions, &attributes,
                                     c_strings(argv).data(), c_strings(environment).data());
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
  }

  const WorkerLaunch& launch_;
  const SupervisorSignals& signals_;
  std::vector<Worker> workers_;
};

// The watch over a started job: its output, its exits, the stop signals.
class Supervision {
 public:
  Supervision(const WorkerLaunch& launch, std::vector<Worker>& workers, SupervisorSignals& signals, std::ostream& err)
      : launch_(launch), workers_(workers), signals_(signals), err_(err) {}

  int run() {
    while (std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.running; })) {
      wait_for_events();
      handle_signals();
      reap_exited();
      kill_after_grace();
    }
    return first_failure_code_;
  }

 private:
  void wait_for_events() {
    std::vector<pollfd> polled{{signals_.wake_fd(), POLLIN, 0}};
    std::vector<std::pair<Worker*, int>> streams;
    for (auto& worker : workers_)
      for (int stream : {0, 1})
        if (worker.fds[stream] >= 0) {
          polled.push_back({worker.fds[stream], POLLIN, 0});
          streams.emplace_back(&worker, stream);
        }
    auto timeout = kPollInterval;
    if (kill_deadline_)
      timeout = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(*kill_deadline_ - Clock::now()),
                           std::chrono::milliseconds(0), kPollInterval);
    if (::poll(polled.data(), polled.size(), static_cast<int>(timeout.count())) <= 0) return;  // EINTR: look again
    for (std::size_t i = 1; i < polled.size(); ++i)
      if (polled[i].revents != 0) streams[i - 1].first->read_output(streams[i - 1].second);
  }

  void handle_signals() {
    for (const ReceivedSignal& received : signals_.take()) {
      if (received.number != SIGINT && received.number != SIGTERM && received.number != SIGUSR1)
        continue;  // SIGCHLD: reap_exited looks
      stopping_ = true;
      if (received.from_terminal) continue;  // the kernel sent it to every worker too
      for (auto& worker : workers_)
        if (worker.running) ::kill(worker.pid, received.number);
    }
  }

  void reap_exited() {
    for (auto& worker : workers_) {
      if (!worker.running) continue;
      pid_t reaped;
      while ((reaped = ::waitpid(worker.pid, &worker.status, WNOHANG)) < 0 && errno == EINTR) {
      }
      if (reaped == 0) continue;
      if (reaped < 0) worker.status = 255 << 8;  // ECHILD: someone else reaped it; count it as failed
      worker.running = false;
      // What it wrote before exiting is all in the pipes now; read it, then
      // stop listening, even if a process it left behind still holds the pipe.
      for (int stream : {0, 1}) {
        worker.read_output(stream);
        if (worker.fds[stream] >= 0) worker.close_output(stream);
      }
      if (exit_code(worker.status) != 0 && first_failure_code_ == 0) on_first_failure(worker);
    }
  }

  void on_first_failure(const Worker& failed) {
    first_failure_code_ = exit_code(failed.status);
    const bool others_running =
        std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.running; });
    err_ << "orchestrate: rank " << failed.rank << " " << describe_exit(failed.status)
         << (others_running && !stopping_ ? "; stopping the other workers" : "") << "\n"
         << std::flush;
    if (stopping_ || !others_running) return;
    for (auto& worker : workers_)
      if (worker.running) ::kill(worker.pid, SIGTERM);
    kill_deadline_ = Clock::now() + launch_.grace;
  }

  void kill_after_grace() {
    if (!kill_deadline_ || Clock::now() < *kill_deadline_) return;
    kill_deadline_.reset();
    std::string ranks;
    for (auto& worker : workers_)
      if (worker.running) {
        ::kill(worker.pid, SIGKILL);
        ranks += (ranks.empty() ? "" : ", ") + std::to_string(worker.rank);
      }
    if (!ranks.empty())
      err_ << "orchestrate: rank " << ranks << " still running " << launch_.grace.count()
           << " ms after SIGTERM; sending SIGKILL\n"
           << std::flush;
  }

  const WorkerLaunch& launch_;
  std::vector<Worker>& workers_;
  SupervisorSignals& signals_;
  std::ostream& err_;
  bool stopping_ = false;  // a stop signal reached the workers: theirs to finish
  int first_failure_code_ = 0;
  std::optional<Clock::time_point> kill_deadline_;
};

}  // namespace

int supervise_workers(const WorkerLaunch& launch, std::ostream& out, std::ostream& err) {
  if (launch.argv.empty() || launch.nproc < 1)
    throw Error("internal: supervise_workers needs a command and at least one worker (got " +
                std::to_string(launch.argv.size()) + " arguments, nproc " + std::to_string(launch.nproc) + ")");
  // Handlers first: a worker that exits at once must not be missed.
  SupervisorSignals signals;
  const int port = launch.master_port != 0 ? launch.master_port : pick_free_tcp_port(launch.master_addr);
  WorkerGroup group(launch, signals);
  for (int rank = 0; rank < launch.nproc; ++rank) group.start(rank, port, out, err);
  return Supervision(launch, group.workers(), signals, err).run();
}

}  // namespace orchestrate

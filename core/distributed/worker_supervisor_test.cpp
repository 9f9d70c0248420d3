// The supervisor with /bin/sh workers: output, environment, failures and
// signals. Workers that must wait for each other do so through files in a
// scratch directory, so no test depends on a race being won.
#include "distributed/worker_supervisor.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "orchestrate/error.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::ScratchDir;

WorkerLaunch shell_workers(int nproc, const std::string& script) {
  WorkerLaunch launch;
  launch.argv = {"/bin/sh", "-c", script};
  launch.nproc = nproc;
  return launch;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Waits until every file exists (workers create them once their traps are set).
void wait_for_files(const std::vector<std::string>& paths) {
  const auto deadline = Clock::now() + 20s;
  for (const auto& path : paths)
    while (!std::filesystem::exists(path)) {
      ASSERT_LT(Clock::now(), deadline) << "no " << path;
      std::this_thread::sleep_for(10ms);
    }
}

pid_t read_pid(const std::string& path) {
  pid_t pid = 0;
  std::ifstream(path) >> pid;
  return pid;
}

TEST(WorkerSupervisor, EveryLineOfEveryWorkerWholeAndPrefixed) {
  // Lines written in pieces (printf, then the rest), lines longer than a pipe
  // read, and stderr beside stdout, from three workers at once.
  const std::string long_tail(20000, 'z');
  auto launch = shell_workers(3, R"(i=0
while [ $i -lt 100 ]; do
  printf 'line %d of rank %s ' $i $RANK
  printf '%s\n' )" + long_tail + R"(
  echo "warning $i of rank $RANK" >&2
  i=$((i+1))
done
printf 'last words of rank %s' $RANK)");
  std::ostringstream out, err;
  EXPECT_EQ(supervise_workers(launch, out, err), 0) << err.str();

  std::map<int, int> next_line;
  for (const auto& line : lines_of(out.str())) {
    int rank = -1, number = -1, rank_again = -2;
    char tail[20001] = {};
    if (std::sscanf(line.c_str(), "[rank %d] line %d of rank %d %20000s", &rank, &number, &rank_again, tail) == 4) {
      EXPECT_EQ(rank, rank_again) << "a line of one worker under another's prefix";
      EXPECT_EQ(number, next_line[rank]++) << "rank " << rank << ": lines lost or out of order";
      EXPECT_EQ(std::string(tail), long_tail) << "rank " << rank << " line " << number << " cut or mixed";
    } else {
      EXPECT_TRUE(line == "[rank 0] last words of rank 0" || line == "[rank 1] last words of rank 1" ||
                  line == "[rank 2] last words of rank 2")
          << "unexpected line: " << line.substr(0, 200);
    }
  }
  EXPECT_EQ(next_line, (std::map<int, int>{{0, 100}, {1, 100}, {2, 100}}));
  std::map<int, int> next_warning;
  for (const auto& line : lines_of(err.str())) {
    int rank = -1, number = -1, rank_again = -2;
    ASSERT_EQ(std::sscanf(line.c_str(), "[rank %d] warning %d of rank %d", &rank, &number, &rank_again), 3) << line;
    EXPECT_EQ(rank, rank_again);
    EXPECT_EQ(number, next_warning[rank]++);
  }
  EXPECT_EQ(next_warning, (std::map<int, int>{{0, 100}, {1, 100}, {2, 100}}));
}

TEST(WorkerSupervisor, EachWorkerSeesItsLaunchVariablesAndInheritsTheRest) {
  ::setenv("ORCHESTRATE_TEST_INHERITED", "kept", 1);
  ::setenv("RANK", "99", 1);  // a stale launch variable must not leak through
  auto launch = shell_workers(
      2, "echo \"$RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT $ORCHESTRATE_LAUNCHER "
         "$ORCHESTRATE_TEST_INHERITED\"");
  std::ostringstream out, err;
  const int code = supervise_workers(launch, out, err);
  ::unsetenv("ORCHESTRATE_TEST_INHERITED");
  ::unsetenv("RANK");
  ASSERT_EQ(code, 0) << err.str();

  auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 2u) << out.str();
  std::sort(lines.begin(), lines.end());
  int port = 0;
  ASSERT_EQ(std::sscanf(lines[0].c_str(), "[rank 0] 0 2 0 2 127.0.0.1 %d orchestrate kept", &port), 1) << lines[0];
  EXPECT_GT(port, 0) << "port 0 asks for a free port, which every worker must get";
  EXPECT_EQ(lines[1], "[rank 1] 1 2 1 2 127.0.0.1 " + std::to_string(port) + " orchestrate kept");

  launch.master_port = 29123;
  launch.nproc = 1;
  std::ostringstream fixed;
  ASSERT_EQ(supervise_workers(launch, fixed, err), 0);
  EXPECT_EQ(fixed.str(), "[rank 0] 0 1 0 1 127.0.0.1 29123 orchestrate \n");
}

TEST(WorkerSupervisor, AFailureIsReturnedAndEndsTheOthersAtOnce) {
  ScratchDir dir;
  // Rank 0 would sleep 30 s; its TERM trap shows who ended it. Rank 1 fails
  // once rank 0's trap is set.
  auto launch = shell_workers(2, "cd " + dir.path().string() + R"(
if [ "$RANK" = 0 ]; then
  trap 'kill $child; echo "ended by SIGTERM"; exit 143' TERM
  sleep 30 & child=$!
  touch ready
  wait $child
  echo "slept in peace"
else
  while [ ! -e ready ]; do sleep 0.01; done
  echo "failing" >&2
  exit 3
fi)");
  std::ostringstream out, err;
  const auto start = Clock::now();
  EXPECT_EQ(supervise_workers(launch, out, err), 3);
  EXPECT_LT(seconds_since(start), 10.0) << "rank 0 was not stopped";
  EXPECT_EQ(out.str(), "[rank 0] ended by SIGTERM\n");
  EXPECT_NE(err.str().find("[rank 1] failing\n"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("orchestrate: rank 1 exited with code 3; stopping the other workers\n"), std::string::npos)
      << err.str();
}

TEST(WorkerSupervisor, AWorkerIgnoringSigtermGetsSigkillAfterTheGrace) {
  ScratchDir dir;
  auto launch = shell_workers(2, "cd " + dir.path().string() + R"(
if [ "$RANK" = 0 ]; then
  trap '' TERM
  touch ready
  exec sleep 30
fi
while [ ! -e ready ]; do sleep 0.01; done
exit 1)");
  launch.grace = 300ms;
  std::ostringstream out, err;
  const auto start = Clock::now();
  EXPECT_EQ(supervise_workers(launch, out, err), 1);
  const double elapsed = seconds_since(start);
  EXPECT_GE(elapsed, 0.3);
  EXPECT_LT(elapsed, 10.0);
  EXPECT_EQ(err.str(),
            "orchestrate: rank 1 exited with code 1; stopping the other workers\n"
            "orchestrate: rank 0 still running 300 ms after SIGTERM; sending SIGKILL\n");
}

TEST(WorkerSupervisor, ASignalDeathCountsAs128PlusTheSignal) {
  std::ostringstream out, err;
  EXPECT_EQ(supervise_workers(shell_workers(1, "kill -KILL $$"), out, err), 137);
  EXPECT_EQ(err.str(), "orchestrate: rank 0 was killed by signal 9 (SIGKILL)\n");
}

TEST(WorkerSupervisor, AMissingExecutableIsAnError) {
  WorkerLaunch launch;
  launch.argv = {"/nonexistent/orchestrate"};
  launch.nproc = 2;
  std::ostringstream out, err;
  try {
    supervise_workers(launch, out, err);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "cannot start worker 0: /nonexistent/orchestrate: No such file or directory; check the executable "
                 "path");
  }
}

// Workers for the stop-signal tests: each counts the `signal`s it receives,
// then takes a moment to "save a checkpoint" (rank 1 longer than rank 0)
// before exiting 130. A second signal during the save shows as "got 2".
std::string counting_worker(const std::string& dir, const std::string& signal) {
  return "cd " + dir + R"(
n=0
trap 'n=$((n+1)); echo "got $n"; touch got$RANK' )" +
         signal + R"(
echo $$ > pid$RANK
touch ready$RANK
while [ $n -eq 0 ]; do sleep 0.01; done
if [ "$RANK" = 1 ]; then sleep 0.8; else sleep 0.2; fi
echo saved
exit 130)";
}

std::vector<std::string> sorted_lines(const std::string& text) {
  auto lines = lines_of(text);
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(WorkerSupervisor, SigtermToTheSupervisorIsForwardedAndTheWorkersLeftToFinish) {
  ScratchDir dir;
  const auto launch = shell_workers(2, counting_worker(dir.path().string(), "TERM"));
  std::thread sender([&] {
    wait_for_files({dir.file("ready0"), dir.file("ready1")});
    ::kill(::getpid(), SIGTERM);  // `kill PID`: to the supervisor alone
  });
  std::ostringstream out, err;
  const int code = supervise_workers(launch, out, err);
  sender.join();
  EXPECT_EQ(code, 130);
  // Rank 1, still saving when rank 0 finished, got no SIGTERM on top.
  EXPECT_EQ(sorted_lines(out.str()),
            (std::vector<std::string>{"[rank 0] got 1", "[rank 0] saved", "[rank 1] got 1", "[rank 1] saved"}));
  // One line for the first to finish (rank 0, unless a loaded machine delayed it), no "stopping the others".
  EXPECT_TRUE(err.str() == "orchestrate: rank 0 exited with code 130\n" ||
              err.str() == "orchestrate: rank 1 exited with code 130\n")
      << err.str();
}

TEST(WorkerSupervisor, ATerminalCtrlCIsNotForwardedSinceTheWorkersHaveItAlready) {
  ScratchDir dir;
  const auto launch = shell_workers(2, counting_worker(dir.path().string(), "INT"));
  std::thread terminal([&] {
    wait_for_files({dir.file("ready0"), dir.file("ready1")});
    // The tty driver sends Ctrl-C's SIGINT to every process of the foreground
    // group. The workers' copies first, so that a forwarded one would arrive
    // while they save, and be counted.
    for (const char* pid_file : {"pid0", "pid1"}) ::kill(read_pid(dir.file(pid_file)), SIGINT);
    wait_for_files({dir.file("got0"), dir.file("got1")});
    // The supervisor's copy, from the kernel (SI_KERNEL). Linux lets a thread
    // queue a signal with that code to itself only; the handler is the process's.
    siginfo_t info{};
    info.si_signo = SIGINT;
    info.si_code = SI_KERNEL;
    EXPECT_EQ(::syscall(SYS_rt_tgsigqueueinfo, ::getpid(), ::gettid(), SIGINT, &info), 0) << std::strerror(errno);
  });
  std::ostringstream out, err;
  const int code = supervise_workers(launch, out, err);
  terminal.join();
  EXPECT_EQ(code, 130);
  EXPECT_EQ(sorted_lines(out.str()),
            (std::vector<std::string>{"[rank 0] got 1", "[rank 0] saved", "[rank 1] got 1", "[rank 1] saved"}));
  // One line for the first to finish (rank 0, unless a loaded machine delayed it), no "stopping the others".
  EXPECT_TRUE(err.str() == "orchestrate: rank 0 exited with code 130\n" ||
              err.str() == "orchestrate: rank 1 exited with code 130\n")
      << err.str();
}

TEST(WorkerSupervisor, HandlersAreRestoredAfterwards) {
  struct sigaction before {};
  sigaction(SIGTERM, nullptr, &before);
  std::ostringstream out, err;
  ASSERT_EQ(supervise_workers(shell_workers(1, "true"), out, err), 0);
  struct sigaction after {};
  sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

}  // namespace
}  // namespace orchestrate

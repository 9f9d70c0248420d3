// The local executor on real processes: each slot's jobs run on that slot's
// cores alone, with OMP_NUM_THREADS set to match, never more at once than
// there are slots, and a job that fails or cannot start is reported, not lost.
#include "sweep/local_executor.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "orchestrate/error.h"
#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate::sweep {
namespace {

using testing::ScratchDir;

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Job shell_job(ScratchDir& dir, std::int64_t trial, const std::string& script) {
  const std::string stem = dir.file("job" + std::to_string(trial));
  return {trial, "/bin/sh", {"-c", script}, stem + ".out", stem + ".err"};
}

TEST(LocalExecutor, EachSlotRunsOnItsOwnCoresAndNoMoreJobsThanSlots) {
  ScratchDir dir;
  const std::vector<Slot> slots = machine_slots(1, 1, 0, 0);  // one slot of one core: runs anywhere
  std::vector<Job> jobs;
  for (int trial = 0; trial < 3; ++trial)
    jobs.push_back(shell_job(dir, trial,
                             "grep Cpus_allowed_list /proc/self/status; echo threads=$OMP_NUM_THREADS; "
                             "date +%s.%N; sleep 0.2; date +%s.%N"));
  std::vector<std::int64_t> order;
  LocalExecutor(slots).run(
      jobs, [&](const Finished& finished) {
        EXPECT_EQ(finished.exit_code, 0);
        order.push_back(finished.job->trial);
      },
      [](int) {}, [] { return false; });
  EXPECT_EQ(order, (std::vector<std::int64_t>{0, 1, 2}));  // one slot: one after the other
  double previous_end = 0;
  for (const auto& job : jobs) {
    std::istringstream out(contents(job.stdout_path));
    std::string allowed, threads;
    double start = 0, end = 0;
    std::getline(out, allowed);
    std::getline(out, threads);
    out >> start >> end;
    EXPECT_EQ(allowed, "Cpus_allowed_list:\t" + std::to_string(slots[0].cores[0]));
    EXPECT_EQ(threads, "threads=1");
    EXPECT_GE(start, previous_end);  // never two at once in one slot
    previous_end = end;
  }
}

// Two slots (this machine has 2 cores or more): two jobs at once, each on its own core.
TEST(LocalExecutor, TwoSlotsRunTwoJobsAtOnceOnDifferentCores) {
  ScratchDir dir;
  const std::vector<Slot> slots = machine_slots(2, 1, 0, 0);
  std::vector<Job> jobs;
  for (int trial = 0; trial < 2; ++trial)
    jobs.push_back(shell_job(dir, trial, "grep Cpus_allowed_list /proc/self/status; date +%s.%N; sleep 0.5; "
                                         "date +%s.%N"));
  LocalExecutor(slots).run(
      jobs, [](const Finished& finished) { EXPECT_EQ(finished.exit_code, 0); }, [](int) {}, [] { return false; });
  std::vector<double> starts, ends;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::istringstream out(contents(jobs[i].stdout_path));
    std::string allowed;
    double start = 0, end = 0;
    std::getline(out, allowed);
    out >> start >> end;
    EXPECT_EQ(allowed, "Cpus_allowed_list:\t" + std::to_string(slots[i].cores[0]));
    starts.push_back(start);
    ends.push_back(end);
  }
  EXPECT_NE(slots[0].cores, slots[1].cores);
  EXPECT_LT(std::max(starts[0], starts[1]), std::min(ends[0], ends[1]));  // they overlapped
}

TEST(LocalExecutor, AFailingOrMissingProgramIsReportedAndTheRestRun) {
  ScratchDir dir;
  std::vector<Job> jobs{shell_job(dir, 0, "echo broken >&2; exit 3"), shell_job(dir, 1, "kill -9 $$"),
                        {2, dir.file("no_such_program"), {}, dir.file("2.out"), dir.file("2.err")},
                        shell_job(dir, 3, "true")};
  std::map<std::int64_t, int> codes;
  LocalExecutor(machine_slots(1, 1, 0, 0))
      .run(jobs, [&](const Finished& finished) { codes[finished.job->trial] = finished.exit_code; }, [](int) {},
           [] { return false; });
  ASSERT_EQ(codes.size(), 4u);  // every job reported, none lost
  EXPECT_EQ(codes.at(0), 3);
  EXPECT_EQ(codes.at(1), 128 + 9);
  EXPECT_NE(codes.at(2), 0);  // could not start
  EXPECT_EQ(codes.at(3), 0);
  EXPECT_EQ(contents(jobs[0].stderr_path), "broken\n");
}

TEST(LocalExecutor, AStopStartsNoMoreJobs) {
  ScratchDir dir;
  std::vector<Job> jobs{shell_job(dir, 0, "sleep 0.3"), shell_job(dir, 1, "true")};
  int finished = 0;
  bool stop = false;
  LocalExecutor(machine_slots(1, 1, 0, 0))
      .run(jobs, [&](const Finished&) { ++finished; stop = true; }, [](int) {}, [&] { return stop; });
  EXPECT_EQ(finished, 1);
}

// A stop reaches a running job as one SIGINT, as Ctrl-C reaches a run.
TEST(LocalExecutor, AStopPassesOneSigintToTheRunningJobs) {
  ScratchDir dir;
  std::vector<Job> jobs{shell_job(dir, 0, "sleep 30 & trap 'echo interrupted; kill $!; exit 130' INT; wait")};
  const auto started = std::chrono::steady_clock::now();
  int code = -2;
  LocalExecutor(machine_slots(1, 1, 0, 0))
      .run(jobs, [&](const Finished& finished) { code = finished.exit_code; }, [](int) {},
           [&] { return std::chrono::steady_clock::now() - started > std::chrono::milliseconds(300); });
  EXPECT_EQ(code, 130);
  EXPECT_EQ(contents(jobs[0].stdout_path), "interrupted\n");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));  // not the 30 s sleep
}

// Early stopping: one job interrupted from a tick, the other left to finish.
TEST(LocalExecutor, AnInterruptReachesThatJobAloneAsOneSigint) {
  ScratchDir dir;
  const std::string trapped = "sleep 30 & trap 'echo interrupted; kill $!; exit 130' INT; wait";
  std::vector<Job> jobs{shell_job(dir, 0, trapped), shell_job(dir, 1, "sleep 1; echo done")};
  std::map<std::int64_t, int> codes;
  LocalExecutor pair(machine_slots(2, 1, 0, 0));
  pair.run(
      jobs, [&](const Finished& finished) { codes[finished.job->trial] = finished.exit_code; },
      [&](int) { pair.interrupt(0); }, [] { return false; });
  EXPECT_EQ(codes[0], 130);
  EXPECT_EQ(contents(jobs[0].stdout_path), "interrupted\n");
  EXPECT_EQ(codes[1], 0);
  EXPECT_EQ(contents(jobs[1].stdout_path), "done\n");
}

// kill -9 of the sweep: its running jobs get SIGINT from the kernel, save and end.
TEST(LocalExecutor, AJobGetsOneSigintWhenTheSweepDies) {
  ScratchDir dir;
  const std::string marker = dir.file("marker");
  const pid_t sweep = fork();
  if (sweep == 0) {
    std::vector<Job> jobs{
        shell_job(dir, 0, "sleep 30 & trap 'echo interrupted > " + marker + "; kill $!; exit 130' INT; wait")};
    LocalExecutor(machine_slots(1, 1, 0, 0)).run(jobs, [](const Finished&) {}, [](int) {}, [] { return false; });
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the job runs
  kill(sweep, SIGKILL);
  waitpid(sweep, nullptr, 0);
  const auto killed = std::chrono::steady_clock::now();
  while (contents(marker).empty() && std::chrono::steady_clock::now() - killed < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(contents(marker), "interrupted\n");
}

TEST(LocalExecutor, SlotsThatDoNotFitTheMachineAreRefused) {
  EXPECT_THROW(machine_slots(100000, 1, 0, 0), Error);
  EXPECT_THROW(machine_slots(1, 1, 1, 0), Error);
}

}  // namespace
}  // namespace orchestrate::sweep

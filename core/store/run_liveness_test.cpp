#include "store/run_liveness.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace orchestrate {
namespace {

std::int64_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST(RunLivenessTest, StalenessIsTenMissedBeatsAndAtLeastAMinute) {
  EXPECT_DOUBLE_EQ(staleness_limit_s(std::chrono::seconds(10)), 100.0);
  EXPECT_DOUBLE_EQ(staleness_limit_s(std::chrono::seconds(1)), 60.0);
  EXPECT_DOUBLE_EQ(staleness_limit_s(std::chrono::duration<double>(0.1)), 60.0);
}

TEST(RunLivenessTest, WritersBeatAtLeastEveryTenSeconds) {
  EXPECT_DOUBLE_EQ(beat_period(std::chrono::seconds(60)).count(), 10.0);
  EXPECT_DOUBLE_EQ(beat_period(std::chrono::duration<double>(0.1)).count(), 0.1);
  // The shortest limit any reader uses still spans several beats of any writer.
  EXPECT_GE(staleness_limit_s(std::chrono::duration<double>(0.1)) / beat_period(std::chrono::hours(1)).count(), 6.0);
}

TEST(RunLivenessTest, KnowsWhichProcessesExist) {
  EXPECT_TRUE(process_exists(::getpid()));
  EXPECT_TRUE(process_exists(1)) << "init exists, though it is not ours to signal";
  EXPECT_FALSE(process_exists(dead_pid()));
  EXPECT_FALSE(process_exists(0));
  EXPECT_FALSE(process_exists(-5));
  EXPECT_FALSE(process_exists(std::int64_t{1} << 40)) << "no pid_t is that large";
}

// kill -9 of a process whose parent has not waited for it yet leaves a zombie.
TEST(RunLivenessTest, AKilledProcessNotYetReapedDoesNotExist) {
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  EXPECT_TRUE(process_exists(child));
  kill(child, SIGKILL);
  for (int tries = 0; tries < 200 && process_exists(child); ++tries) usleep(10000);
  EXPECT_FALSE(process_exists(child)) << "a zombie runs nothing";
  EXPECT_EQ(waitpid(child, nullptr, 0), child) << "it was a zombie, not reaped: we reap it now";
}

TEST(RunLivenessTest, LostWhenItsProcessIsGoneHereOrItsHeartbeatIsStale) {
  const std::string here = this_host_name();
  ASSERT_FALSE(here.empty());
  const std::int64_t me = ::getpid();
  const std::int64_t gone = dead_pid();

  EXPECT_FALSE(run_is_lost({here, me, 1.0}, here, 60.0));
  EXPECT_TRUE(run_is_lost({here, gone, 1.0}, here, 60.0)) << "a dead pid here is seen at once";
  EXPECT_TRUE(run_is_lost({here, me, 61.0}, here, 60.0)) << "a stale heartbeat wins even over a live pid (reuse)";
  EXPECT_FALSE(run_is_lost({"elsewhere", gone, 1.0}, here, 60.0)) << "another host's pid means nothing here";
  EXPECT_TRUE(run_is_lost({"elsewhere", me, 61.0}, here, 60.0));
  EXPECT_FALSE(run_is_lost({here, 0, 1.0}, here, 60.0)) << "an unknown pid (older rows) waits for the heartbeat";
  EXPECT_FALSE(run_is_lost({here, gone, 1.0}, "", 60.0)) << "no host name: pids cannot be compared";
  EXPECT_FALSE(run_is_lost({"elsewhere", 7, -30.0}, here, 60.0)) << "a clock ahead of ours is not staleness";
}

}  // namespace
}  // namespace orchestrate

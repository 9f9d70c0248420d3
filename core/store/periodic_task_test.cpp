#include "store/periodic_task.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace orchestrate {
namespace {

using namespace std::chrono_literals;

// Waits up to `limit` (generous, for a loaded machine) for `done`.
template <class Done>
bool eventually(Done&& done, std::chrono::seconds limit = 10s) {
  const auto give_up_at = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < give_up_at) std::this_thread::sleep_for(5ms);
  return done();
}

TEST(PeriodicTaskTest, CallsTheWorkEveryIntervalUntilStopped) {
  std::atomic<int> calls{0};
  PeriodicTask task([&] { ++calls; });
  EXPECT_FALSE(task.running());
  task.start(10ms);
  EXPECT_TRUE(task.running());
  EXPECT_TRUE(eventually([&] { return calls >= 3; }));
  task.stop();
  EXPECT_FALSE(task.running());
  const int after_stop = calls;
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(calls, after_stop) << "no call after stop() returned";
}

TEST(PeriodicTaskTest, ANewIntervalTakesEffectAtOnce) {
  std::atomic<int> calls{0};
  PeriodicTask task([&] { ++calls; });
  task.start(1h);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(calls, 0) << "the first call comes one interval after the start";
  task.set_interval(10ms);
  EXPECT_TRUE(eventually([&] { return calls >= 1; })) << "an hour-long wait must not delay the new interval";
}

TEST(PeriodicTaskTest, RunWithinBringsOneCallForwardAndKeepsTheInterval) {
  std::atomic<int> calls{0};
  PeriodicTask task([&] { ++calls; });
  task.start(1h);
  task.run_within(10ms);
  task.run_within(1h);  // later than already due: changes nothing
  EXPECT_TRUE(eventually([&] { return calls >= 1; })) << "an hour-long interval must not delay run_within";
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(calls, 1) << "one early call, then the hour-long interval again";
  for (int i = 0; i < 100; ++i) task.run_within(30ms);  // many requests within one delay: one call
  EXPECT_TRUE(eventually([&] { return calls >= 2; }));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(calls, 2);
}

TEST(PeriodicTaskTest, StopsPromptlyAndRestarts) {
  std::atomic<int> calls{0};
  PeriodicTask task([&] { ++calls; });
  task.stop();  // not running: nothing to do
  task.start(1h);
  const auto before = std::chrono::steady_clock::now();
  task.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 5s) << "stop must not wait out the interval";
  task.start(10ms);
  task.start(10ms);  // running already: only the interval is taken
  EXPECT_TRUE(eventually([&] { return calls >= 1; }));
}  // the destructor stops the running task

}  // namespace
}  // namespace orchestrate

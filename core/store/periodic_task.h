// Calls a function every interval on a thread of its own, until stopped: the
// run store's background flush and heartbeat, which must go on while the
// training thread is busy elsewhere (a long evaluation, a slow data load).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace orchestrate {

class PeriodicTask {
 public:
  using Interval = std::chrono::duration<double>;

  // `work` runs on the task's thread and must not throw, nor call stop().
  explicit PeriodicTask(std::function<void()> work);
  ~PeriodicTask();  // stops and joins
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  // Starts the thread, which first calls `work` one interval from now. A task
  // already running only takes the new interval.
  void start(Interval interval);
  // Takes effect at once: the next call comes one new interval after the last.
  void set_interval(Interval interval);
  // The next call comes `delay` from now at the latest (sooner if already
  // due); later calls keep the interval. For rows another thread wants
  // written soon without writing them itself. Cheap when already that soon.
  void run_within(Interval delay);
  // Wakes the thread and joins it; a call of `work` under way is finished
  // first. Does nothing when the task is not running.
  void stop();
  bool running() const;

 private:
  void loop();

  std::function<void()> work_;
  std::mutex control_;        // serialises start and stop, so a stop's join never races a restart
  mutable std::mutex mutex_;  // guards the fields below
  std::condition_variable wake_;
  Interval interval_{10.0};
  bool stopping_ = false;
  bool interval_changed_ = false;
  std::optional<std::chrono::steady_clock::time_point> due_early_;  // set by run_within
  std::thread thread_;
};

}  // namespace orchestrate

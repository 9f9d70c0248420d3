// How long training waits for the run store: the time the record_* calls
// spend on their caller's thread, for scripts/bench/logging_overhead.py.
//
// A benchmark instrument, switched on by ORCHESTRATE_STORE_BENCHMARK, not a
// feature of the store: "measure" times the calls and prints the total to
// stderr when the store closes; "discard" does the same but drops every step
// row and metric, so the very same run can be timed without logging (its
// report then has no steps to show). Unset, a call costs one branch, no
// clock read.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace orchestrate {

class RecordCallClock {
 public:
  enum class Mode { off, measure, discard };

  // Reads ORCHESTRATE_STORE_BENCHMARK; throws Error for a value it does not know.
  static Mode mode_from_environment();

  explicit RecordCallClock(Mode mode) : mode_(mode) {}
  bool discards() const { return mode_ == Mode::discard; }

  // Adds its lifetime to the clock's total, when the clock is on.
  class Timed {
   public:
    explicit Timed(RecordCallClock& clock)
        : clock_(clock.mode_ == Mode::off ? nullptr : &clock),
          start_(clock_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}
    ~Timed();
    Timed(const Timed&) = delete;
    Timed& operator=(const Timed&) = delete;

   private:
    RecordCallClock* clock_;
    std::chrono::steady_clock::time_point start_;
  };

  // "run store FILE: N record calls (ORCHESTRATE_STORE_BENCHMARK=measure)
  // took S s on their callers' threads"; "" when off.
  std::string summary(const std::string& path) const;

 private:
  Mode mode_;
  std::atomic<std::int64_t> calls_{0}, nanoseconds_{0};
};

}  // namespace orchestrate

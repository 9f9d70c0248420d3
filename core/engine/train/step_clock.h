// The step timing's clock: every second between two updates' ends belongs
// to one of them, except what an evaluation, a checkpoint or a snapshot
// takes (their own events' time), so the report's images/s agrees with the
// wall clock. It also says when the rows waiting between log points are due
// to be written (flush_secs).
#pragma once

#include <chrono>

#include "engine/setup/elapsed_seconds.h"

namespace orchestrate {

class StepClock {
 public:
  using Clock = std::chrono::steady_clock;

  explicit StepClock(double flush_seconds) : flush_seconds_(flush_seconds) {}

  // The first update's time counts from here.
  void start() { last_step_end_ = Clock::now(); }
  // The seconds of the update that ended at `end`.
  double step_seconds(Clock::time_point end) const { return seconds_between(last_step_end_, end); }
  // The update ended at `end`; what follows until the next one's start is
  // the next one's, unless set_aside() says otherwise.
  void step_ended(Clock::time_point end) { last_step_end_ = end; }
  // What happened since the last step's end (an evaluation, a checkpoint)
  // is not the next step's time.
  void set_aside() { last_step_end_ = Clock::now(); }

  // Whether the rows waiting since the last write are due at `now`; then
  // rows_written() once they are.
  bool rows_due(Clock::time_point now) const { return seconds_between(last_row_write_, now) >= flush_seconds_; }
  void rows_written() { last_row_write_ = Clock::now(); }

 private:
  const double flush_seconds_;
  Clock::time_point last_step_end_ = Clock::now();
  Clock::time_point last_row_write_ = Clock::now();
};

}  // namespace orchestrate

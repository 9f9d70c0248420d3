// Where a run's setup went, phase by phase, recorded as one "setup" event
// when the first step is about to start: the time the process had already
// run before the run began (LibTorch's start, CUDA's libraries, the plugins),
// then building the components (data sets, model, optimizer), counting FLOPs
// and finding the matmul peak, and starting the input pipeline and the run's
// parts. A user waiting for the first step, and issue 41's "first step in
// seconds", need to know which of these to cut; time/setup_s alone is their sum
// after the run began.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace orchestrate {

// How long this process has run, from /proc/self/stat's start time (10 ms
// resolution); negative where it cannot be read.
double process_age_seconds();

class SetupTimeline {
 public:
  using Clock = std::chrono::steady_clock;

  // `process_age_s`: process_age_seconds() when the run began (negative: unknown).
  SetupTimeline(Clock::time_point run_began, double process_age_s)
      : last_(run_began), began_(run_began), before_run_s_(process_age_s) {}

  // The phase that ends now, since the previous one ended (or the run began).
  void phase_done(std::string name);

  // "before the run 1.31 s (the process's start: LibTorch, CUDA, plugins);
  // components 0.20 s, FLOPs and peak 0.05 s, pipeline and parts 0.01 s;
  // 0.26 s in all since the run began"
  std::string text() const;

 private:
  Clock::time_point last_, began_;
  double before_run_s_;
  std::vector<std::pair<std::string, double>> phases_;
};

}  // namespace orchestrate

// Times the compute and optimizer phases of each step without making the
// host wait for the device.
//
// CPU: the host clock (the work is done when the call returns). CUDA: kernels
// run after the host has moved on, so events are recorded on the current
// stream at each boundary and read one step late, when they have long
// completed; only take(/*wait=*/true), at a log boundary, waits.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Event.h>

#include <chrono>
#include <deque>
#include <vector>

namespace orchestrate {

struct PhaseTimes {
  double compute_s = 0;    // forward + backward, all micro-batches of the step
  double optimizer_s = 0;  // unscale, wrappers, optimizer step, zero_grad
};

class PhaseTimer {
 public:
  explicit PhaseTimer(const c10::Device& device);
  void compute_begins();   // before a micro-batch's forward
  void compute_ends();     // after its backward
  // After the gradients' all-reduce (data parallelism): the optimizer phase
  // starts here, so the wait for the other ranks is not optimizer time. The
  // wait itself is measured by whoever waits (GradientReducer).
  void sync_ends();
  void optimizer_ends();   // after the update: closes the step
  // Times of closed steps not yet taken, oldest first. On CUDA the newest
  // step is held back until the next one closes, unless `wait`.
  std::vector<PhaseTimes> take(bool wait);

 private:
  using Clock = std::chrono::steady_clock;
  struct DeviceStep {
    std::vector<c10::Event> compute;  // begin, end, begin, end, ...
    std::vector<c10::Event> sync_end;       // none, or one event
    std::vector<c10::Event> optimizer_end;  // one event
  };
  c10::Event record();

  c10::Device device_;
  bool on_host_;
  // Host clock
  Clock::time_point compute_began_, last_compute_end_;
  PhaseTimes current_;
  std::vector<PhaseTimes> closed_;
  // Device events
  DeviceStep step_;
  std::deque<DeviceStep> pending_;
};

}  // namespace orchestrate

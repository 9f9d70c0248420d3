#include "engine/train/phase_timer.h"

#include <c10/core/impl/VirtualGuardImpl.h>

namespace orchestrate {

namespace {
double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

PhaseTimer::PhaseTimer(const c10::Device& device) : device_(device), on_host_(!device.is_cuda()) {}

c10::Event PhaseTimer::record() {
  c10::Event event(device_.type(), c10::EventFlag::BACKEND_DEFAULT);  // BACKEND_DEFAULT: timing enabled
  event.record(c10::impl::VirtualGuardImpl(device_.type()).getStream(device_));
  return event;
}

void PhaseTimer::compute_begins() {
  if (on_host_) compute_began_ = Clock::now();
  else step_.compute.push_back(record());
}

void PhaseTimer::compute_ends() {
  if (on_host_) {
    last_compute_end_ = Clock::now();
    current_.compute_s += seconds(last_compute_end_ - compute_began_);
  } else {
    step_.compute.push_back(record());
  }
}

void PhaseTimer::sync_ends() {
  if (on_host_) last_compute_end_ = Clock::now();
  else step_.sync_end.push_back(record());
}

void PhaseTimer::optimizer_ends() {
  if (on_host_) {
    current_.optimizer_s = seconds(Clock::now() - last_compute_end_);
    closed_.push_back(current_);
    current_ = {};
    return;
  }
  step_.optimizer_end.push_back(record());
  pending_.push_back(std::move(step_));
  step_ = {};
}

std::vector<PhaseTimes> PhaseTimer::take(bool wait) {
  std::vector<PhaseTimes> out;
  out.swap(closed_);
  while (pending_.size() > (wait ? 0u : 1u)) {
    DeviceStep& step = pending_.front();
    step.optimizer_end.front().synchronize();  // one step late: normally done already
    PhaseTimes times;
    for (std::size_t i = 0; i + 1 < step.compute.size(); i += 2)
      times.compute_s += step.compute[i].elapsedTime(step.compute[i + 1]) / 1e3;
    const c10::Event& optimizer_begin = step.sync_end.empty() ? step.compute.back() : step.sync_end.front();
    times.optimizer_s = optimizer_begin.elapsedTime(step.optimizer_end.front()) / 1e3;
    out.push_back(times);
    pending_.pop_front();
  }
  return out;
}

}  // namespace orchestrate

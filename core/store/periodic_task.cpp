#include "store/periodic_task.h"

namespace orchestrate {
namespace {

std::chrono::steady_clock::duration to_clock(PeriodicTask::Interval interval) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval);
}

}  // namespace

PeriodicTask::PeriodicTask(std::function<void()> work) : work_(std::move(work)) {}

PeriodicTask::~PeriodicTask() { stop(); }

void PeriodicTask::start(Interval interval) {
  std::lock_guard control(control_);
  std::lock_guard lock(mutex_);
  interval_ = interval;
  interval_changed_ = true;
  if (thread_.joinable()) {
    wake_.notify_all();
    return;
  }
  stopping_ = false;
  thread_ = std::thread([this] { loop(); });
}

void PeriodicTask::set_interval(Interval interval) {
  std::lock_guard lock(mutex_);
  interval_ = interval;
  interval_changed_ = true;
  wake_.notify_all();
}

void PeriodicTask::run_within(Interval delay) {
  std::lock_guard lock(mutex_);
  const auto due = std::chrono::steady_clock::now() + to_clock(delay);
  if (due_early_ && *due_early_ <= due) return;
  due_early_ = due;
  interval_changed_ = true;  // the loop recomputes its deadline
  wake_.notify_all();
}

void PeriodicTask::stop() {
  std::lock_guard control(control_);
  std::thread finished;
  {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) return;
    stopping_ = true;
    finished = std::move(thread_);
  }
  wake_.notify_all();
  finished.join();  // outside the lock: the thread takes it to leave its wait
}

bool PeriodicTask::running() const {
  std::lock_guard lock(mutex_);
  return thread_.joinable();
}

void PeriodicTask::loop() {
  std::unique_lock lock(mutex_);
  auto last = std::chrono::steady_clock::now();
  while (!stopping_) {
    interval_changed_ = false;
    auto due = last + to_clock(interval_);
    if (due_early_ && *due_early_ < due) due = *due_early_;
    const bool woken = wake_.wait_until(lock, due, [&] { return stopping_ || interval_changed_; });
    if (woken) continue;  // stop, or wait again for the new deadline
    due_early_.reset();
    lock.unlock();  // `work` may take long; set_interval and stop must not wait for it
    work_();
    lock.lock();
    last = std::chrono::steady_clock::now();
  }
}

}  // namespace orchestrate

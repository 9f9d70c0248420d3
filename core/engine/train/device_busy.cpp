#include "engine/train/device_busy.h"

#include <sstream>

#include "analysis/table_format.h"
#include "store/run_records.h"

namespace orchestrate {

DeviceBusy::DeviceBusy(Reader reader, std::string source, std::chrono::milliseconds period)
    : reader_(std::move(reader)), source_(std::move(source)), period_(period) {
  if (reader_) thread_ = std::thread([this] { sample_until_stopped(); });
}

DeviceBusy::~DeviceBusy() { stop(); }

void DeviceBusy::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// Called at every step's end: after the first, one relaxed load and no lock.
void DeviceBusy::step_done() {
  if (!reader_ || sampling_.load(std::memory_order_relaxed)) return;
  const std::lock_guard lock(mutex_);
  drop_next_ = true;  // its period reaches back into the first step
  sampling_ = true;
}

DeviceBusy::Pause::Pause(DeviceBusy& busy) : busy_(busy) { busy_.set_paused(true); }
DeviceBusy::Pause::~Pause() { busy_.set_paused(false); }

void DeviceBusy::set_paused(bool paused) {
  const std::lock_guard lock(mutex_);
  pauses_ += paused ? 1 : -1;
  if (!paused) drop_next_ = true;
}

void DeviceBusy::sample_until_stopped() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, period_, [this] { return stopping_; });
    if (stopping_) return;
    if (!sampling_ || pauses_ > 0) continue;
    lock.unlock();
    const std::optional<double> percent = reader_();  // NVML, outside the lock
    lock.lock();
    if (!percent || pauses_ > 0) continue;
    if (drop_next_) {
      drop_next_ = false;
      continue;
    }
    percent_sum_ += *percent;
    ++readings_;
  }
}

std::optional<double> DeviceBusy::mean_share() const {
  const std::lock_guard lock(mutex_);
  if (readings_ == 0) return std::nullopt;
  return percent_sum_ / 100.0 / static_cast<double>(readings_);
}

std::size_t DeviceBusy::readings() const {
  const std::lock_guard lock(mutex_);
  return readings_;
}

void DeviceBusy::record(const RunRecorder& recorder, std::int64_t step) {
  stop();
  const auto share = mean_share();
  if (!share) return;
  recorder.metric(step, 0, kDeviceBusyMetric, *share);
  std::ostringstream text;
  text << "the GPU ran kernels " << percent(*share) << " of the training time (" << source_ << ", the mean of "
       << readings() << " readings " << period_.count() << " ms apart, from the end of the first step, "
       << "evaluation and checkpoints left out)";
  recorder.event("device_busy", text.str());
}

}  // namespace orchestrate

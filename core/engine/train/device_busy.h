// How much of the training time the GPU spent running kernels, as NVML
// measures it (the share of its last sample period in which one or more
// kernels ran): what tells a launch-bound step, the GPU idle between small
// kernels while the host launches the next, from an arithmetic-bound one.
// The step's times alone cannot: both are all compute to the host's clock.
//
// A thread of its own reads the device every kDeviceBusySamplePeriod while
// training steps run, from the end of the process's first step (cuDNN's
// autotuning and the allocator's first fill are not the run's pace), and
// not while the run evaluates or saves a checkpoint; the first reading after
// each such pause is dropped, since its period may reach back into it. The
// training thread never waits on NVML. At the run's end the mean is the
// run's metric kDeviceBusyMetric (store/run_records.h), which the
// throughput verdict reads, and an event "device_busy" says how it was
// taken. Off CUDA or on a rank other than 0 nothing is sampled; without
// NVML every reading is none, and nothing is recorded.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "store/run_recorder.h"

namespace orchestrate {

// NVML's own sample period is between 1/6 s and 1 s, by product.
inline constexpr std::chrono::milliseconds kDeviceBusySamplePeriod{200};

class DeviceBusy {
 public:
  // The percent of its last sample period the device ran kernels, or none
  // when it could not be read.
  using Reader = std::function<std::optional<double>()>;

  // An empty `reader` samples nothing. `source` names it for the event ("NVML").
  DeviceBusy(Reader reader, std::string source, std::chrono::milliseconds period = kDeviceBusySamplePeriod);
  ~DeviceBusy();  // stops the thread
  DeviceBusy(const DeviceBusy&) = delete;
  DeviceBusy& operator=(const DeviceBusy&) = delete;

  // A training step ended: sampling runs from the first on.
  void step_done();

  // No samples while it lives (evaluation, a checkpoint's save).
  class Pause {
   public:
    explicit Pause(DeviceBusy& busy);
    ~Pause();
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;

   private:
    DeviceBusy& busy_;
  };

  // Stops sampling, and records the mean at `step` when any reading was taken.
  void record(const RunRecorder& recorder, std::int64_t step);

  // The mean share (0 to 1) of the readings so far, and how many.
  std::optional<double> mean_share() const;
  std::size_t readings() const;

 private:
  void sample_until_stopped();
  void set_paused(bool paused);
  void stop();

  Reader reader_;
  std::string source_;
  std::chrono::milliseconds period_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> sampling_{false};  // the first step has ended: step_done's only read, without the lock
  int pauses_ = 0;           // live Pause objects
  bool drop_next_ = false;   // the next reading may reach back into a pause
  double percent_sum_ = 0;
  std::size_t readings_ = 0;
  std::thread thread_;
};

// NVML's reading for `device_index` (a CUDA device of this process). NVML
// (the driver's libnvidia-ml.so.1) is opened at the first reading, on the
// sampling thread; where it is not there or does not know the device, every
// reading is none, and nothing is recorded.
DeviceBusy::Reader nvml_busy_reader(int device_index);
// Whether NVML gives a reading for the device now (orchestrate env).
bool nvml_answers(int device_index);

}  // namespace orchestrate

// The updates since the last log point. Their losses and training hits stay
// on the device and their step rows wait here until flush(), which reads the
// device once for the whole window and writes the rows and train/* metrics,
// so a steady-state step never waits for the device.
//
// Log points are chosen by step (the caller's log_every), so two identical
// runs log the same curve. write_rows() makes the rows durable in between
// (the caller's flush_secs) without making a log point: the train/* means
// still cover every update since the last one.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/train/phase_timer.h"
#include "store/run_recorder.h"
#include "store/run_records.h"

namespace orchestrate {


class LogWindow {
 public:
  LogWindow(const RunRecorder& recorder, PhaseTimer& timer);

  // One micro-batch's logits (any dtype) and labels: counted into train/top1 and top5.
  void count_hits(const at::Tensor& logits, const at::Tensor& labels);
  // A finished update: its row (without loss and phase times yet) and its loss on the device.
  void add_update(const StepTiming& row, const at::Tensor& loss);
  // Another per-micro-batch scalar on the device (an auxiliary loss): its
  // mean over the window is recorded as `metric` at flush.
  void add_scalar(const std::string& metric, const at::Tensor& value);
  // No row and no metric waits for a log point.
  bool empty() const { return rows_.empty() && written_rows_ == 0; }

  struct Summary {
    std::int64_t last_step = 0;
    double mean_loss = 0;
    std::int64_t first_nonfinite_step = -1;  // -1: every loss was finite
    double first_nonfinite_loss = 0;
    std::vector<StepTiming> rows;  // as written, loss and phase times filled in
    // train/loss, train/learning_rate (the last update's), train/top1,
    // train/top5 and the other scalars' means at
    // last_step, for the caller to record with its own in one commit.
    MetricValues metrics;
  };
  // A log point: writes the rows, returns the window's metrics, and starts a new window.
  Summary flush();
  // Writes the rows that wait (reading only their losses) and returns them,
  // with no metrics: the window goes on to the next log point.
  Summary write_rows();

 private:
  void fill_phase_times(bool wait);
  Summary take(bool log_point);

  const RunRecorder recorder_;
  PhaseTimer& timer_;
  std::vector<StepTiming> rows_;
  std::vector<at::Tensor> losses_;
  std::map<std::string, std::pair<at::Tensor, std::int64_t>> scalars_;  // metric -> (sum on the device, count)
  std::size_t timed_rows_ = 0;  // rows that have their phase times
  // Rows of this window already written by write_rows(): their losses' sum.
  std::int64_t written_rows_ = 0;
  double written_loss_sum_ = 0;
  std::int64_t last_step_ = 0;
  double last_learning_rate_ = 0;
  at::Tensor top1_, top5_;      // hits, on the device
  std::int64_t images_ = 0;
  bool has_top5_ = false;       // five classes or more
};

}  // namespace orchestrate

// Metrics and timing, one concern of the step: the phase timer, the window
// of updates since the last log point, the train/* metrics written at each
// log point, the latest value of every metric (a checkpoint's record), and
// the step rows of ranks 1.. brought to rank 0.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collective.h"
#include "log_window.h"
#include "phase_timer.h"
#include "run_records.h"
#include "settings.h"

namespace orchestrate {

class RunStore;

class TrainMetrics {
 public:
  // Adds the metrics other parts own (regularization loss, wrappers' and the
  // loss scaler's) to a log point's.
  using MoreMetrics = std::function<void(MetricValues&)>;

  TrainMetrics(RunStore& store, std::int64_t run_id, const c10::Device& device, Collective* collective,
               NonFinitePolicy on_nonfinite, MoreMetrics more);

  PhaseTimer& timer() { return timer_; }
  LogWindow& window() { return window_; }

  // A log point: the window's rows and train/* metrics at its last step,
  // recorded in one commit. Throws when the loss diverged and
  // on_nonfinite = "stop".
  void log_point(std::int64_t epoch);
  // Only the rows that wait, so a killed run loses few (flush_secs); the
  // metrics wait for the next log point, which keeps the curve the step's.
  void write_rows();
  // A data-parallel job's log point: every rank together, then ranks 1..'s
  // rows reach rank 0's store.
  void log_point_with_rank_rows(std::int64_t epoch);

  std::optional<double> recent_loss() const { return recent_loss_; }  // none before the first log point
  std::map<std::string, double>& latest() { return latest_; }  // for checkpoint records

 private:
  void keep(const LogWindow::Summary& summary);

  RunStore& store_;
  const std::int64_t run_id_;
  Collective* const collective_;
  const bool leader_;
  const NonFinitePolicy on_nonfinite_;
  const MoreMetrics more_;
  PhaseTimer timer_;
  LogWindow window_;
  std::vector<StepTiming> rank_rows_;  // ranks 1..: written since the last gather
  std::optional<double> recent_loss_;
  std::map<std::string, double> latest_;
};

}  // namespace orchestrate

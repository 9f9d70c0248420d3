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

#include "distributed/collective.h"
#include "engine/recipe/settings.h"
#include "engine/train/log_window.h"
#include "engine/train/phase_timer.h"
#include "engine/train/step_clock.h"
#include "orchestrate/stateful.h"
#include "store/run_recorder.h"
#include "store/run_records.h"

namespace orchestrate {


// Its state: the seconds spent evaluating so far (time/eval_s).
class TrainMetrics : public Stateful {
 public:
  // Adds the metrics other parts own (regularization loss, wrappers' and the
  // loss scaler's) to a log point's.
  using MoreMetrics = std::function<void(MetricValues&)>;

  // `flush_seconds`: how long step rows may wait between log points.
  TrainMetrics(const RunRecorder& recorder, const c10::Device& device, Collective* collective,
               NonFinitePolicy on_nonfinite, double flush_seconds, MoreMetrics more);

  PhaseTimer& timer() { return timer_; }
  StepClock& clock() { return clock_; }
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
  // Adds one evaluation's seconds; returns those of all evaluations so far.
  double add_eval_seconds(double seconds) { return eval_seconds_ += seconds; }

  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

 private:
  void keep(const LogWindow::Summary& summary);

  const RunRecorder recorder_;
  Collective* const collective_;
  const bool leader_;
  const NonFinitePolicy on_nonfinite_;
  const MoreMetrics more_;
  PhaseTimer timer_;
  StepClock clock_;
  LogWindow window_;
  std::vector<StepTiming> rank_rows_;  // ranks 1..: written since the last gather
  std::optional<double> recent_loss_;
  std::map<std::string, double> latest_;
  double eval_seconds_ = 0;
};

}  // namespace orchestrate

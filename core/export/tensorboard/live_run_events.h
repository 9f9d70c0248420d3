// A run's curves as TensorBoard events, from what the run store records:
// every metric, and at each log point (a batch of metrics with train/loss)
// what the step rows since the last one say (and the resolved recipe as
// hparams, for TensorBoard's HPARAMS tab): train/learning_rate,
// perf/images_per_s, perf/step_s and the phase shares perf/data_wait_share,
// perf/compute_share, perf/sync_share and perf/optimizer_share.
//
// RunEvents writes them to one event file. LiveRunEvents is [log]
// tensorboard = "DIR": fed by the run store's observer (RunStore::observe)
// as the run records, it opens its file in DIR/<id>-<name> (the directory
// `export tensorboard` uses) at the first row or metric (each names the run)
// and flushes at every
// metric batch, so `tensorboard --logdir DIR` follows the run.
// `export tensorboard` replays a stored run through RunEvents
// (tensorboard_export.h), so the two write the same tags.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "export/tensorboard/event_file_writer.h"
#include "store/run_records.h"

namespace orchestrate::tensorboard {

class RunEvents {
 public:
  RunEvents(const std::string& event_file, double wall_time);
  // A step row; rank 0's (the job's) count.
  void step(const StepTiming& row);
  // Metrics recorded at `step` at `wall_time` (seconds since 1970 UTC).
  void metrics(std::int64_t step, const MetricValues& values, double wall_time);
  // The resolved recipe, flattened ("optimizer.lr" -> "0.1"), as hparams.
  void hparams(const std::vector<std::pair<std::string, std::string>>& params, double wall_time) {
    events_.add_hparams(params, wall_time);
  }
  void flush() { events_.flush(); }
  void close() { events_.close(); }
  std::size_t scalars() const { return scalars_; }

 private:
  void add(const std::string& tag, std::int64_t step, double wall_time, double value);

  EventFileWriter events_;
  std::size_t scalars_ = 0;
  // The job's rows since the last log point.
  std::int64_t rows_ = 0, images_ = 0;
  double total_s_ = 0, data_wait_s_ = 0, compute_s_ = 0, sync_s_ = 0, optimizer_s_ = 0, learning_rate_ = 0;
};

class LiveRunEvents {
 public:
  // `params`: the resolved recipe, flattened, written as the run's hparams.
  LiveRunEvents(std::string directory, std::string run_name, std::string host,
                std::vector<std::pair<std::string, std::string>> params);
  void step(std::int64_t run_id, const StepTiming& row);
  void metrics(std::int64_t run_id, std::int64_t step, const MetricValues& values);

 private:
  RunEvents& events_for(std::int64_t run_id);

  std::string directory_, run_name_, host_;
  std::vector<std::pair<std::string, std::string>> params_;
  std::unique_ptr<RunEvents> events_;
};

}  // namespace orchestrate::tensorboard

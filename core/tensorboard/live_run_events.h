// [log] tensorboard = "DIR": the run as TensorBoard sees it while it trains.
// Fed by the run store's observer (RunStore::observe) with every step row
// and metric as they are recorded, it appends to one event file in
// DIR/<id>-<name> (the directory `export tensorboard` uses) and flushes at
// each log point, so `tensorboard --logdir DIR` follows the run. Besides
// every recorded metric (train/*, eval/*, time/*, perf/*), each log point
// adds what the step rows say about the updates since the last one:
// train/learning_rate, perf/images_per_s, perf/step_s and the phase shares
// perf/data_wait_share, perf/compute_share, perf/sync_share and
// perf/optimizer_share.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "event_file_writer.h"
#include "run_records.h"

namespace orchestrate::tensorboard {

class LiveRunEvents {
 public:
  LiveRunEvents(std::string directory, std::string run_name, std::string host);
  // A step row; rank 0's (the job's) count.
  void step(std::int64_t run_id, const StepTiming& row);
  // Metrics recorded at `step`; a batch with train/loss is a log point.
  void metrics(std::int64_t run_id, std::int64_t step, const MetricValues& values);
  std::string event_file() const { return event_file_; }

 private:
  EventFileWriter& writer_for(std::int64_t run_id);

  std::string directory_, run_name_, host_, event_file_;
  std::unique_ptr<EventFileWriter> writer_;
  // The job's rows since the last log point.
  std::int64_t rows_ = 0, images_ = 0;
  double total_s_ = 0, data_wait_s_ = 0, compute_s_ = 0, sync_s_ = 0, optimizer_s_ = 0, learning_rate_ = 0;
};

}  // namespace orchestrate::tensorboard

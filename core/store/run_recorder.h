// One run's view of the run store: what the parts of a training run record
// (events, metrics, step rows, checkpoints), bound to the run's id, so a
// part takes one recorder in place of (RunStore&, run_id) and cannot write
// to another run by mistake.
#pragma once

#include <cstdint>
#include <string>

#include "store/run_store.h"

namespace orchestrate {

class RunRecorder {
 public:
  RunRecorder(RunStore& store, std::int64_t run_id) : store_(&store), run_id_(run_id) {}

  std::int64_t run_id() const { return run_id_; }
  // Where the store is: what "beside the store" defaults are relative to.
  const std::string& store_path() const { return store_->path(); }

  void event(const std::string& kind, const std::string& message) const {
    store_->record_event(run_id_, kind, message);
  }
  void metric(std::int64_t step, std::int64_t epoch, const std::string& name, double value) const {
    store_->record_metric(run_id_, step, epoch, name, value);
  }
  void metrics(std::int64_t step, std::int64_t epoch, const MetricValues& values) const {
    store_->record_metrics(run_id_, step, epoch, values);
  }
  // A step row; `timing` may be another rank's (its rank field says which).
  void step(const StepTiming& timing) const { store_->record_step(run_id_, timing); }
  // `checkpoint.run_id` is this run's.
  void checkpoint(CheckpointRecord checkpoint) const {
    checkpoint.run_id = run_id_;
    store_->record_checkpoint(checkpoint);
  }
  void forget_checkpoint(const std::string& path) const { store_->forget_checkpoint(run_id_, path); }

 private:
  RunStore* store_;
  std::int64_t run_id_;
};

}  // namespace orchestrate

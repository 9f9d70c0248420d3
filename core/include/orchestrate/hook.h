// Hooks: the `[[hooks]]` array of tables. A hook watches training from the
// side (FastNN's log_loss_every_n_iters, stop_at_step, print_model_statistics
// and profiling hooks): it sees each update read-only and reports through a
// sink. It never gets the run store, the optimizer or the data.
//
// The host calls, on every rank of a data-parallel job (each rank's hook is
// its own object, built from the same params):
//   on_train_begin  once, after the components are built and any checkpoint
//                   restored, before the first update this process runs;
//   before_update   before each update's first micro-batch;
//   after_update    after each update's optimizer step;
//   on_train_end    once, when the loop ends (finished, stopped or interrupted;
//                   not after an error).
// Hooks are called in recipe order, on the training thread.
//
// The contract (checked by the conformance test):
//   - a hook leaves the model as it found it: weights, buffers, train/eval mode;
//   - request_stop() on one rank must be requested on every rank at the same
//     update, so decide it from the step view, which is the same on every
//     rank (the loss is the job's mean);
//   - the loss tensor lives on the device: reading it (.item()) makes the host
//     wait for the device, so read it only at the updates you need it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "orchestrate/api.h"
#include "orchestrate/model.h"
#include "orchestrate/stateful.h"

namespace orchestrate {

// What a hook factory is given. Grows only at the end.
struct HookContext {
  int rank = 0;
  int world_size = 1;
  // Where the hook may write files for this run (created on demand by the
  // hook): <run store's directory>/artifacts/<store file>/run-<id>.
  std::string artifact_dir;
  std::int64_t run_id = 0;
  // [run] log_every: the run logs its train/* metrics every this many
  // updates and at the last (StepView::log_point says which).
  std::int64_t log_every = 0;
};

// The run as it starts. The model is the one being trained, in train mode,
// on `device`; a hook that runs it must restore its mode and touch no weight.
struct TrainBegin {
  Model& model;
  ModelInput input;  // the images the model sees: channels, height, width, classes
  std::int64_t batch_size = 0;  // images per micro-batch on this rank
  std::int64_t first_step = 0;  // updates already done (a resumed run starts later)
  std::int64_t total_steps = 0;
  std::int64_t updates_per_epoch = 0;
  c10::Device device = c10::Device(c10::kCPU);
};

// One finished update, read-only.
struct StepView {
  std::int64_t step = 0;         // updates done, this one included (1-based)
  std::int64_t total_steps = 0;
  std::int64_t epoch = 0;        // 1-based epoch this update belongs to
  double learning_rate = 0;      // the base lr of this update
  at::Tensor loss;               // 0-dim float on the device: the job's mean training loss
  std::int64_t images = 0;       // images of this update, all ranks together
  double step_s = 0;             // wall time since the previous update ended
  double data_wait_s = 0;        // of which this rank waited for data
  // The run logs its train/* metrics at this update ([run] log_every, and
  // the last update): a logging hook that follows the run's rhythm writes here.
  bool log_point = false;
};

enum class TrainEndReason { finished, stopped_by_hook, interrupted };

struct TrainEnd {
  std::int64_t steps = 0;  // updates done
  TrainEndReason reason = TrainEndReason::finished;
};

// Where a hook's output goes. Metrics and events are recorded with the run
// at the current update, as the host's own are.
class ORCHESTRATE_API HookSink {
 public:
  virtual ~HookSink();
  virtual void metric(const std::string& name, double value) = 0;
  // kind: a short word ("profile"); shown by `orchestrate show`.
  virtual void event(const std::string& kind, const std::string& message) = 0;
  // A line for the user, beside the progress line.
  virtual void print(const std::string& line) = 0;
  // Ends training after this update as if it were the last: the final
  // evaluation, checkpoint and export follow, and the run is finished.
  virtual void request_stop(const std::string& reason) = 0;
};

// A hook may keep state across --resume (a counter, a running mean): it
// overrides Stateful's state_dict and load_state_dict, and rank 0's state is
// saved with every checkpoint and given back to each rank's hook when the
// run resumes from it.
class ORCHESTRATE_API Hook : public Stateful {
 public:
  ~Hook() override;
  virtual void on_train_begin(const TrainBegin& run, HookSink& sink);
  virtual void before_update(std::int64_t step);  // the 1-based number the coming update will have
  virtual void after_update(const StepView& step, HookSink& sink);
  virtual void on_train_end(const TrainEnd& end, HookSink& sink);
};

}  // namespace orchestrate

// One training run, composed of parts that each own one concern and save
// and load their own state in the checkpoint:
//   input feeding        BatchPipeline + DeviceBatchFeeder (and Evaluator)
//   precision            PrecisionPolicy: autocast and the loss scaler
//   update strategy      UpdateStep (optimizer and wrappers) and DimReduceStage
//   kernel launches      CudaGraphStep: forward and backward replayed as a CUDA graph
//   device utilisation   DeviceBusy: how much of the time the GPU ran kernels (NVML)
//   host-device waits    SyncCheck: --sync-debug over each steady step
//   processes            Strategy: alone or data-parallel, with GradientSync
//                        (none, bucketed all-reduce, compressed)
//   checkpoint policy    Checkpointer, assembled in run_checkpoint.cpp
//   metrics and timing   TrainMetrics, with the StepClock
//   what the user reads  RunConsole
// The step loop (training_loop.cpp) only calls them.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "checkpoint/checkpointer.h"
#include "checkpoint/trainer_state.h"
#include "engine/evaluation/evaluator.h"
#include "engine/input/batch_pipeline.h"
#include "engine/input/device_batch_feeder.h"
#include "engine/input/resident_batch_feeder.h"
#include "engine/recipe/recipe.h"
#include "engine/recipe/settings.h"
#include "engine/setup/components.h"
#include "engine/setup/compute_setup.h"
#include "engine/train/cuda_graph_step.h"
#include "engine/train/device_busy.h"
#include "engine/train/dim_reduce_stage.h"
#include "engine/train/precision_policy.h"
#include "engine/train/run_console.h"
#include "engine/train/run_hooks.h"
#include "engine/train/stop_signal.h"
#include "engine/train/strategy.h"
#include "engine/train/sync_check.h"
#include "engine/train/train_metrics.h"
#include "engine/train/trainer.h"
#include "engine/train/update_step.h"
#include "store/run_recorder.h"
#include "store/run_records.h"

namespace orchestrate {

// What the trainer built for one run (trainer.cpp), handed over whole.
struct RunParts {
  const Recipe& recipe;
  const Settings& settings;
  TrainingComponents& components;
  RunRecorder recorder;
  const ComputeSetup& compute;
  const TrainOptions& options;
  const StopSignal& stop;
  Checkpointer& checkpointer;
  RunHooks& hooks;
};

// Where the run is: what a checkpoint records and a resume continues from.
struct TrainPosition {
  std::int64_t update = 0;         // updates done
  std::int64_t last_epoch = 0;     // 1-based epoch of the latest update
  std::int64_t resume_micro = 0;   // micro-batches of the next update already accumulated
  at::Tensor partial_loss;         // their summed loss
  bool stopped = false;            // by a signal or the test's micro-batch count
  std::int64_t stopped_micro = 0;  // micro-batches of update + 1 done when the stop came
  std::int64_t evaluated_at_step = -1;
  std::int64_t micro_batches_run = 0;              // by this process
  std::optional<std::int64_t> resumed_at_update;  // the checkpoint's step, when resumed
};

// The run's input: training batches on the device, from the pipeline or
// from the split kept there, and the test split's evaluator (none without a
// test split).
struct RunInput {
  std::unique_ptr<BatchPipeline> train_pipeline;  // none when the split is kept on the device
  std::unique_ptr<BatchFeeder> train_feeder;      // may read train_pipeline, so destroyed first
  std::unique_ptr<Evaluator> evaluator;
};

class TrainingRun {
 public:
  // `resume`: the checkpoint to continue from, or null.
  TrainingRun(const RunParts& run, const CheckpointMeta* resume);

  RunStatus run();
  std::int64_t steps() const { return at_.update; }

 private:
  using Clock = std::chrono::steady_clock;

  // training_loop.cpp: the step loop.
  RunStatus train_epochs();
  void train_epoch(std::int64_t epoch);
  at::Tensor micro_batch(const Batch& batch, StepTiming& timing, bool last);
  CudaGraphStep::Result forward_backward(const at::Tensor& images, const at::Tensor& labels,
                                         std::string& not_capturable);
  void after_update(const StepTiming& timing, const at::Tensor& loss, const at::Tensor& local_loss,
                    std::int64_t epoch, Clock::time_point end);
  bool local_stop() const;
  RunStatus finish_interrupted();

  // training_run.cpp: set-up, evaluation and what the parts need from the run.
  void start_input();
  bool keep_data_on_device() const;
  bool eval_due(std::int64_t epoch) const;
  void run_eval(std::int64_t epoch);
  at::Tensor batch_loss(const at::Tensor& images, const at::Tensor& labels);
  void add_owned_metrics(MetricValues& metrics);
  double regularization_loss() const;
  std::string cuda_graph_blocker() const;

  // The run's settings and components, which every part of the loop reads.
  const Settings& s() const { return run_.settings; }
  TrainingComponents& c() const { return run_.components; }

  // run_checkpoint.cpp: the checkpoint, assembled from every part's state.
  void register_state();
  void save_checkpoint(const std::string& reason);
  void restore(const CheckpointMeta& meta, const std::string& path);

  const RunParts run_;
  RunConsole console_;
  PrecisionPolicy precision_;
  UpdateStep update_step_;
  std::unique_ptr<Strategy> strategy_;
  DimReduceStage stage2_;
  CudaGraphStep graph_step_;
  TrainMetrics metrics_;
  DeviceBusy device_busy_;
  SyncCheck sync_check_;
  RunInput input_;
  TrainPosition at_;
  TrainerState state_;  // every part that keeps state, by name
};

}  // namespace orchestrate

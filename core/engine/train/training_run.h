// One training run, composed of parts that each own one concern and save
// and load their own state in the checkpoint:
//   input feeding        BatchPipeline + DeviceBatchFeeder (and Evaluator)
//   precision            PrecisionPolicy: autocast and the loss scaler
//   update strategy      UpdateStep (optimizer and wrappers) and DimReduceStage
//   gradient sync        GradientSync: none, bucketed all-reduce, compressed
//   checkpoint policy    Checkpointer, assembled in run_checkpoint.cpp
//   metrics and timing   TrainMetrics
// The step loop (training_loop.cpp) only calls them.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "batch_pipeline.h"
#include "checkpointer.h"
#include "collective.h"
#include "components.h"
#include "compute_setup.h"
#include "device_batch_feeder.h"
#include "evaluator.h"
#include "progress_line.h"
#include "recipe.h"
#include "run_hooks.h"
#include "run_records.h"
#include "settings.h"
#include "stop_signal.h"
#include "trainer.h"
#include "train/dim_reduce_stage.h"
#include "train/gradient_sync.h"
#include "train/precision_policy.h"
#include "train/train_metrics.h"
#include "train/update_step.h"
#include "training_state.h"

namespace orchestrate {

class RunStore;

// Where the run is: what a checkpoint records and a resume continues from.
struct TrainPosition {
  std::int64_t update = 0;         // updates done
  std::int64_t last_epoch = 0;     // 1-based epoch of the latest update
  std::int64_t resume_micro = 0;   // micro-batches of the next update already accumulated
  at::Tensor partial_loss;         // their summed loss
  bool stopped = false;            // by a signal or the test's micro-batch count
  std::int64_t stopped_micro = 0;  // micro-batches of update + 1 done when the stop came
  std::int64_t evaluated_at_step = -1;
  std::int64_t micro_batches_run = 0;  // by this process
};

class TrainingRun {
 public:
  TrainingRun(const Recipe& recipe, const Settings& s, TrainingComponents& c, RunStore& store, std::int64_t run_id,
              const ComputeSetup& compute, const TrainOptions& options, const StopSignal& stop,
              Checkpointer& checkpointer, RunHooks& hooks, const CheckpointMeta* resume);

  RunStatus run();
  std::int64_t steps() const { return at_.update; }

 private:
  using Clock = std::chrono::steady_clock;

  // training_loop.cpp: the step loop.
  void train_epoch(std::int64_t epoch);
  at::Tensor micro_batch(const Batch& batch, StepTiming& timing, bool last);
  void after_update(const StepTiming& timing, const at::Tensor& loss, const at::Tensor& local_loss,
                    std::int64_t epoch, Clock::time_point end);
  bool local_stop() const;
  bool stop_requested() const;
  RunStatus finish_interrupted();

  // training_run.cpp: set-up, evaluation and what the parts need from the run.
  void start_input(const ComputeSetup& compute);
  void announce_data_parallel();
  bool eval_due(std::int64_t epoch) const;
  void run_eval(std::int64_t epoch);
  void share_rank0_buffers();
  at::Tensor batch_loss(const at::Tensor& images, const at::Tensor& labels);
  void add_owned_metrics(MetricValues& metrics);
  double regularization_loss() const;

  // A line the user reads even with --quiet (which drops only the progress
  // line): a hook's output, what a resumed run continues.
  void say(const std::string& line);

  // run_checkpoint.cpp: the checkpoint, assembled from every part's state.
  void save_checkpoint(const std::string& reason);
  void restore(const CheckpointMeta& meta, const std::string& path);
  TrainerStateRefs state_refs();

  const Recipe& recipe_;
  const Settings& s_;
  TrainingComponents& c_;
  RunStore& store_;
  const std::int64_t run_id_;
  const c10::Device device_;
  const bool channels_last_;
  Collective* const collective_;  // null when training alone
  const bool leader_;             // records the run: alone, or rank 0
  const bool quiet_;              // no progress line (--quiet, or not the leader)
  const StopSignal& stop_;
  const std::int64_t stop_after_micro_batches_;
  Checkpointer& checkpointer_;
  RunHooks& hooks_;
  std::ostringstream null_stream_;
  ProgressLine progress_;

  PrecisionPolicy precision_;
  UpdateStep update_step_;
  GradientSync sync_;
  DimReduceStage stage2_;
  TrainMetrics metrics_;
  std::unique_ptr<BatchPipeline> train_pipeline_;
  std::unique_ptr<DeviceBatchFeeder> train_feeder_;  // reads train_pipeline_, so destroyed first
  std::unique_ptr<Evaluator> evaluator_;

  TrainPosition at_;
  std::optional<std::int64_t> resumed_at_update_;  // the checkpoint's step, when resumed
  bool agreed_stop_ = false;            // a data-parallel job's, after the last update
  bool agreed_time_checkpoint_ = false;
  double eval_seconds_ = 0;             // all evaluations so far
  Clock::time_point last_step_end_;
  Clock::time_point last_row_write_ = Clock::now();
};

}  // namespace orchestrate

// How the processes of a run act as one, the concern a world size would
// otherwise spread through the step loop: alone (one process), or a
// data-parallel job whose ranks agree after every update, start from rank
// 0's weights, share its batch-norm statistics, average their gradients and
// bring their step rows to rank 0. The loop asks the strategy and never
// looks at the world size.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "checkpoint/checkpointer.h"
#include "distributed/collective.h"
#include "engine/evaluation/evaluator.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/train_metrics.h"
#include "store/run_recorder.h"

namespace orchestrate {

class Strategy {
 public:
  // Whether this process alone must stop now: a signal, or the test's
  // micro-batch count.
  using LocalStop = std::function<bool()>;

  virtual ~Strategy();

  // Whether this process records the run and writes its checkpoints: alone,
  // or rank 0.
  virtual bool leader() const = 0;
  virtual int world_size() const = 0;
  // The gradients' way from backward to the optimizer (gradient_sync.h).
  GradientSync& gradients() { return *gradients_; }

  // What the job records before its first update, and every rank starting
  // from rank 0's weights. `sharding`: how the ranks split the data.
  struct Start {
    std::int64_t batch_size = 0;
    std::int64_t micro_batches_per_update = 1;
    double bucket_size_mb = 0;
    std::string sharding;
  };
  virtual void start(torch::nn::Module& model, const RunRecorder& recorder, const Start& start) = 0;
  // Before each update and each evaluation: every rank uses rank 0's
  // batch-norm statistics, as DDP does.
  virtual void share_buffers(torch::nn::Module& model) = 0;

  // Whether to stop before the next update, and between two micro-batches
  // of one (only alone: a job's ranks stop together, after an update).
  virtual bool stop_before_update() const = 0;
  virtual bool stop_between_micro_batches() const = 0;
  // After the backward passes: the loss the update and the run's loss see
  // (the job's mean), agreeing on a stop and on a checkpoint the clock asks
  // for (`checkpointer`'s, as rank 0 sees it).
  virtual at::Tensor agree_on_update(const at::Tensor& local_loss, const Checkpointer& checkpointer) = 0;
  // Whether the clock asks for a checkpoint after this update.
  virtual bool save_by_time(const Checkpointer& checkpointer) const = 0;

  // A step row's images and loss: the job's on rank 0, the rank's own on
  // the others.
  virtual std::int64_t images_in_row(std::int64_t local_images) const = 0;
  virtual at::Tensor loss_in_row(const at::Tensor& job_loss, const at::Tensor& local_loss) const = 0;
  // A log point; `with_rank_rows`: the other ranks' step rows come to rank
  // 0's store too (every rank calls it together).
  virtual void log_point(TrainMetrics& metrics, std::int64_t epoch, bool with_rank_rows) = 0;
  // How an evaluation's per-rank sums become the job's (none alone).
  virtual SumAcrossRanks sum_across_ranks() = 0;

 protected:
  explicit Strategy(std::unique_ptr<GradientSync> gradients) : gradients_(std::move(gradients)) {}

 private:
  std::unique_ptr<GradientSync> gradients_;
};

// Alone when `collective` is null, otherwise data-parallel over it.
std::unique_ptr<Strategy> make_strategy(Collective* collective, std::unique_ptr<GradientSync> gradients,
                                        Strategy::LocalStop local_stop);

}  // namespace orchestrate

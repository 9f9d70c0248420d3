#include "engine/train/strategy.h"

#include <c10/core/InferenceMode.h>

#include <sstream>

#include "engine/train/rank_messages.h"

namespace orchestrate {

Strategy::~Strategy() = default;

namespace {

class SingleProcess final : public Strategy {
 public:
  SingleProcess(std::unique_ptr<GradientSync> gradients, LocalStop local_stop)
      : Strategy(std::move(gradients)), local_stop_(std::move(local_stop)) {}

  bool leader() const override { return true; }
  int world_size() const override { return 1; }
  void start(torch::nn::Module&, const RunRecorder&, const Start&) override {}
  void share_buffers(torch::nn::Module&) override {}
  // A signal stops at once, even between micro-batches: the checkpoint
  // keeps the gradients accumulated so far.
  bool stop_before_update() const override { return local_stop_(); }
  bool stop_between_micro_batches() const override { return local_stop_(); }
  at::Tensor agree_on_update(const at::Tensor& local_loss, const Checkpointer&) override { return local_loss; }
  bool save_by_time(const Checkpointer& checkpointer) const override { return checkpointer.due_by_time(); }
  std::int64_t images_in_row(std::int64_t local_images) const override { return local_images; }
  at::Tensor loss_in_row(const at::Tensor& job_loss, const at::Tensor&) const override { return job_loss; }
  void log_point(TrainMetrics& metrics, std::int64_t epoch, bool) override { metrics.log_point(epoch); }
  SumAcrossRanks sum_across_ranks() override { return {}; }

 private:
  const LocalStop local_stop_;
};

class DataParallel final : public Strategy {
 public:
  DataParallel(Collective& collective, std::unique_ptr<GradientSync> gradients, LocalStop local_stop)
      : Strategy(std::move(gradients)), collective_(collective), local_stop_(std::move(local_stop)) {}

  bool leader() const override { return collective_.rank() == 0; }
  int world_size() const override { return collective_.world_size(); }

  // Every rank starts from rank 0's weights (the same seed gives the same
  // ones; this makes sure) and averages its gradients into the same update.
  void start(torch::nn::Module& model, const RunRecorder& recorder, const Start& start) override {
    collective_.broadcast_in_place(model.parameters());
    collective_.broadcast_in_place(model.buffers());
    std::ostringstream what;
    what << "rank " << collective_.rank() << " of " << collective_.world_size() << " ("
         << collective_.environment().launcher << " launch, " << collective_.engine()
         << "): " << gradients().describe(start.bucket_size_mb) << "; global batch "
         << start.batch_size * collective_.world_size() << " x " << start.micro_batches_per_update
         << " micro-batches";
    recorder.event("data_parallel", what.str());
    if (leader()) recorder.event("data_sharding", start.sharding);
  }

  void share_buffers(torch::nn::Module& model) override {
    const auto buffers = model.buffers();
    if (!buffers.empty()) collective_.broadcast_in_place(buffers);
  }

  // Only what all ranks agreed on after the last update, so no rank is left
  // waiting in a collective for one that stopped.
  bool stop_before_update() const override { return agreed_.stop; }
  bool stop_between_micro_batches() const override { return false; }

  at::Tensor agree_on_update(const at::Tensor& local_loss, const Checkpointer& checkpointer) override {
    agreed_ = agreements_.agree(collective_, local_loss, local_stop_(), leader() && checkpointer.due_by_time());
    return agreed_.mean_loss;
  }
  bool save_by_time(const Checkpointer&) const override { return agreed_.save_by_time; }

  // Rank 0's row is the job's step: the images of all its ranks (migration 4).
  std::int64_t images_in_row(std::int64_t local_images) const override {
    return leader() ? local_images * collective_.world_size() : local_images;
  }
  at::Tensor loss_in_row(const at::Tensor& job_loss, const at::Tensor& local_loss) const override {
    return leader() ? job_loss : local_loss;
  }
  void log_point(TrainMetrics& metrics, std::int64_t epoch, bool with_rank_rows) override {
    if (with_rank_rows)
      metrics.log_point_with_rank_rows(epoch);
    else
      metrics.log_point(epoch);
  }

  // Each rank scores its share of the test split; the sums make the whole.
  SumAcrossRanks sum_across_ranks() override {
    return [this](at::Tensor& sums) {
      // Evaluation runs in inference mode, whose tensors the engine's
      // threads may not write in place: reduce a normal copy.
      c10::InferenceMode normal_tensors(false);
      auto reduced = sums.clone();
      collective_.all_reduce_sum(reduced);
      sums = reduced;
    };
  }

 private:
  Collective& collective_;
  const LocalStop local_stop_;
  UpdateAgreements agreements_;
  UpdateAgreement agreed_;
};

}  // namespace

std::unique_ptr<Strategy> make_strategy(Collective* collective, std::unique_ptr<GradientSync> gradients,
                                        Strategy::LocalStop local_stop) {
  if (!collective) return std::make_unique<SingleProcess>(std::move(gradients), std::move(local_stop));
  return std::make_unique<DataParallel>(*collective, std::move(gradients), std::move(local_stop));
}

}  // namespace orchestrate

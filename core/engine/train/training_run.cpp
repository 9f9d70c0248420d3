#include "train/training_run.h"
#include "run_store.h"
#include "elapsed_seconds.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <iomanip>
#include <iostream>

#include "train/objective.h"

namespace orchestrate {

TrainingRun::TrainingRun(const Recipe& recipe, const Settings& s, TrainingComponents& c, RunStore& store,
                         std::int64_t run_id, const ComputeSetup& compute, const TrainOptions& options,
                         const StopSignal& stop, Checkpointer& checkpointer, RunHooks& hooks,
                         const CheckpointMeta* resume)
    : recipe_(recipe),
      s_(s),
      c_(c),
      store_(store),
      run_id_(run_id),
      device_(compute.device),
      channels_last_(compute.channels_last),
      collective_(options.collective),
      leader_(!collective_ || collective_->rank() == 0),
      quiet_(options.progress == nullptr),
      stop_(stop),
      stop_after_micro_batches_(options.stop_after_micro_batches),
      checkpointer_(checkpointer),
      hooks_(hooks),
      progress_(options.progress ? *options.progress : null_stream_,
                options.progress ? parse_progress_mode(s.progress) : ProgressMode::never, s.run.log_every,
                options.progress_is_terminal),
      precision_(s.precision.mode, s.precision.loss_scaler(), compute.device.type()),
      update_step_(c, s.run.on_nonfinite, store, run_id),
      sync_(collective_, update_step_.parameters(), c.compressor.get(), s.compression.plugin,
            s.distributed.bucket_size_mb),
      stage2_(s, c, store, run_id, collective_, options.artifact_root,
              [this](const std::string& line) { progress_.message(line); }),
      metrics_(store, run_id, compute.device, collective_, s.run.on_nonfinite,
               [this](RunStore::MetricValues& metrics) { add_owned_metrics(metrics); }) {
  // A hook prints what its recipe asked for (a model's statistics), so
  // --quiet, which drops the progress line, does not drop it.
  hooks_.set_printer([this](const std::string& line) { say(line); });
  stage2_.set_up(resume ? std::optional<std::int64_t>(resume->step) : std::nullopt);
  if (resume) restore(*resume, options.resume_from);
  if (collective_) announce_data_parallel();
  start_input(compute);
}

void TrainingRun::say(const std::string& line) {
  if (!quiet_) {
    progress_.message(line);
  } else if (leader_) {
    std::cerr << line << '\n';
  }
}

// Every rank starts from rank 0's weights (the same seed gives the same
// ones; this makes sure) and averages its gradients into the same update.
void TrainingRun::announce_data_parallel() {
  collective_->broadcast_in_place(c_.model->parameters());
  collective_->broadcast_in_place(c_.model->buffers());
  std::ostringstream what;
  what << "rank " << collective_->rank() << " of " << collective_->world_size() << " ("
       << collective_->environment().launcher << " launch, " << collective_->engine()
       << "): " << sync_.describe(s_.distributed.bucket_size_mb) << "; global batch "
       << s_.run.batch_size * collective_->world_size() << " x " << c_.micro_batches_per_update << " micro-batches";
  store_.record_event(run_id_, "data_parallel", what.str());
}

// Input feeding. An epoch is the micro-batches its updates use; a remainder
// smaller than one update is left out, so every epoch starts on a fresh
// permutation. A data-parallel job's ranks read disjoint, balanced shards
// (rank_shards.h). A stream dataset with [run] shuffle_buffer_size is
// shuffled as TF's Dataset.shuffle would, so its files are read nearly front
// to back.
void TrainingRun::start_input(const ComputeSetup& compute) {
  const std::int64_t per_epoch = c_.updates_per_epoch * c_.micro_batches_per_update;
  if (collective_ && leader_) store_.record_event(run_id_, "data_sharding", c_.shards->describe());
  const std::int64_t shuffle_buffer = stream_shuffle_buffer(s_, *c_.train_set);
  train_pipeline_ = std::make_unique<BatchPipeline>(
      SampleSource{*c_.train_set, *c_.train_preprocessing, s_.run.seed, compute.rank, compute.world_size,
                   c_.sites.train_set, c_.sites.train_preprocessing},
      [shards = c_.shards, batch = s_.run.batch_size, seed = s_.run.seed, per_epoch, shuffle_buffer,
       rank = compute.rank](std::int64_t epoch) {
        auto batches = shards->batches(rank, batch, seed, epoch, shuffle_buffer);
        batches.resize(static_cast<std::size_t>(per_epoch));
        return batches;
      },
      per_epoch, c_.epochs, compute.pipeline, at_.update * c_.micro_batches_per_update + at_.resume_micro);
  train_feeder_ = std::make_unique<DeviceBatchFeeder>(*train_pipeline_, device_);
  if (c_.test_set)
    evaluator_ = std::make_unique<Evaluator>(
        SampleSource{*c_.test_set, *c_.eval_preprocessing, s_.run.seed, compute.rank, compute.world_size,
                     c_.sites.test_set, c_.sites.eval_preprocessing},
        s_.eval.batch_size, device_, c_.epochs + 1, compute.pipeline);
}

bool TrainingRun::eval_due(std::int64_t epoch) const {
  return evaluator_ && s_.eval.every_epochs > 0 && epoch % s_.eval.every_epochs == 0;
}

void TrainingRun::run_eval(std::int64_t epoch) {
  share_rank0_buffers();
  const auto start = Clock::now();
  // Each rank scores its share of the test split; the sums make the whole.
  SumAcrossRanks sum_across_ranks;
  if (collective_)
    sum_across_ranks = [this](at::Tensor& sums) {
      // Evaluation runs in inference mode, whose tensors the engine's
      // threads may not write in place: reduce a normal copy.
      c10::InferenceMode normal_tensors(false);
      auto reduced = sums.clone();
      collective_->all_reduce_sum(reduced);
      sums = reduced;
    };
  const EvalResult r =
      evaluate_model(*evaluator_, *c_.model, device_, s_.precision.mode, channels_last_, sum_across_ranks);
  c_.model->train();
  RunStore::MetricValues metrics;
  for (const auto& [name, value] : eval_metrics(r)) {
    metrics.emplace_back(name, value);
    metrics_.latest()[name] = value;
  }
  at_.evaluated_at_step = at_.update;
  const double seconds = seconds_since(start);
  eval_seconds_ += seconds;
  metrics.emplace_back("time/eval_s", eval_seconds_);
  store_.record_metrics(run_id_, at_.update, epoch, metrics);
  std::ostringstream line;
  line << "eval after epoch " << epoch << " (step " << at_.update << "): " << format_eval(r) << "  (" << r.examples
       << " images, " << std::fixed << std::setprecision(1) << seconds << " s)";
  store_.record_event(run_id_, "eval", line.str());
  progress_.message(line.str());
  last_step_end_ = Clock::now();  // evaluation time is the event's, not the next step's
}

// Batch-norm statistics as DDP keeps them: every rank uses rank 0's, sent
// before each update and before evaluating, so all ranks' models are equal.
void TrainingRun::share_rank0_buffers() {
  if (!collective_) return;
  const auto buffers = c_.model->buffers();
  if (!buffers.empty()) collective_->broadcast_in_place(buffers);
}

at::Tensor TrainingRun::batch_loss(const at::Tensor& images, const at::Tensor& labels) {
  return cross_entropy(precision_.forward(*c_.model, images).logits, labels, s_.label_smoothing);
}

// What a log point records beside the window's own metrics.
void TrainingRun::add_owned_metrics(RunStore::MetricValues& metrics) {
  metrics.emplace_back("train/reg_loss", regularization_loss());
  for (const auto& [name, value] : update_step_.metrics())
    if (value.defined()) metrics.emplace_back(name, value.item<double>());
  precision_.add_metrics(metrics, update_step_.skipped());
}

// 0.5 * sum over groups of weight_decay * |w|^2: the L2 term weight decay
// adds to the loss (the LARS seed logs it as reg_loss beside ent_loss).
double TrainingRun::regularization_loss() const {
  at::NoGradGuard no_grad;
  double total = 0;
  for (const auto& group : c_.groups) {
    if (group.weight_decay == 0) continue;
    std::vector<at::Tensor> tensors;
    for (const auto& p : group.parameters) tensors.push_back(p.tensor.detach());
    const auto norms = at::_foreach_norm(tensors);
    total += 0.5 * group.weight_decay * at::stack(norms).pow(2).sum().item<double>();
  }
  return total;
}

}  // namespace orchestrate

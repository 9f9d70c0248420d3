#include "trainer.h"

#include <ATen/ops/cross_entropy_loss.h>
#include <c10/core/InferenceMode.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "checkpointer.h"
#include "collective.h"
#include "components.h"
#include "compressed_gradient_exchange.h"
#include "compute_setup.h"
#include "device_batch_feeder.h"
#include "durable_file.h"
#include "epoch_plan.h"
#include "evaluator.h"
#include "gradient_reducer.h"
#include "orchestrate/error.h"
#include "log_window.h"
#include "phase_timer.h"
#include "progress_line.h"
#include "resume.h"
#include "dim_reduce/dim_reduce_training.h"
#include "run_data_events.h"
#include "run_failure.h"
#include "run_hooks.h"
#include "run_identity.h"
#include "serving_export.h"
#include "settings.h"
#include "store_sql.h"
#include "stop_signal.h"
#include "training_state.h"
#include "usable_cores.h"

namespace orchestrate {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// The state of one training run, so the loop reads as the steps it takes.
class TrainingRun {
 public:
  TrainingRun(const Recipe& recipe, const Settings& s, TrainingComponents& c, RunStore& store, std::int64_t run_id,
              const ComputeSetup& compute, const TrainOptions& options, const StopSignal& stop,
              Checkpointer& checkpointer, RunHooks& hooks, const CheckpointMeta* resume)
      : recipe_(recipe),
        s_(s),
        c_(c),
        store_(store),
        run_id_(run_id),
        device_(compute.device),
        channels_last_(compute.channels_last),
        scaler_(s.precision.scaler),
        timer_(compute.device),
        window_(store, run_id, timer_),
        progress_(options.progress ? *options.progress : null_stream_,
                  options.progress ? parse_progress_mode(s.progress) : ProgressMode::never, s.run.log_every,
                  options.progress_is_terminal),
        stop_(stop),
        stop_after_micro_batches_(options.stop_after_micro_batches),
        checkpointer_(checkpointer),
        hooks_(hooks),
        collective_(options.collective),
        leader_(!collective_ || collective_->rank() == 0) {
    for (const auto& group : c.groups)
      for (const auto& parameter : group.parameters) parameters_.push_back(parameter.tensor);
    if (c.compressor) exchange_ = std::make_unique<CompressedGradientExchange>(collective_, parameters_);
    // A hook prints what its recipe asked for (a model's statistics), so
    // --quiet, which drops the progress line, does not drop it.
    hooks_.set_printer([this, quiet = options.progress == nullptr](const std::string& line) {
      if (!quiet) {
        progress_.message(line);
      } else if (leader_) {
        std::cerr << line << '\n';
      }
    });
    // Before a resume restores its state: stage 2 exists at once when the
    // checkpoint was taken in it (its state is in the checkpoint).
    set_up_dim_reduce(options, resume ? std::optional<std::int64_t>(resume->step) : std::nullopt);
    if (resume) restore(*resume, options.resume_from);
    if (collective_) {
      // Every rank starts from rank 0's weights (the same seed gives the same
      // ones; this makes sure) and averages its gradients into the same update.
      collective_->broadcast_in_place(c.model->parameters());
      collective_->broadcast_in_place(c.model->buffers());
      std::ostringstream what;
      what << "rank " << collective_->rank() << " of " << collective_->world_size() << " ("
           << collective_->environment().launcher << " launch, " << collective_->engine() << "): ";
      if (exchange_) {
        what << "gradients compressed by " << s.compression.plugin << " and exchanged by all-gather";
      } else {
        reducer_ = std::make_unique<GradientReducer>(*collective_, parameters_, s.distributed.bucket_size_mb);
        what << reducer_->bucket_count() << " gradient buckets of at most " << s.distributed.bucket_size_mb
             << " MB, " << std::fixed << std::setprecision(2) << reducer_->bytes_per_update() / 1048576.0
             << " MB all-reduced per update";
      }
      what << "; global batch " << s.run.batch_size * collective_->world_size() << " x "
           << c.micro_batches_per_update << " micro-batches";
      store_.record_event(run_id_, "data_parallel", what.str());
    }
    // An epoch is the micro-batches its updates use; a remainder smaller than
    // one update is left out, so every epoch starts on a fresh permutation.
    const std::int64_t per_epoch = c.updates_per_epoch * c.micro_batches_per_update;
    // A data-parallel job's ranks read disjoint, balanced shards (rank_shards.h).
    // A stream dataset with [run] shuffle_buffer_size is shuffled as TF's
    // Dataset.shuffle would, so its files are read nearly front to back.
    if (collective_ && leader_) store_.record_event(run_id_, "data_sharding", c.shards->describe());
    const std::int64_t shuffle_buffer = stream_shuffle_buffer(s, *c.train_set);
    train_pipeline_ = std::make_unique<BatchPipeline>(
        SampleSource{*c.train_set, *c.train_preprocessing, s.run.seed, compute.rank, compute.world_size},
        [shards = c.shards, batch = s.run.batch_size, seed = s.run.seed, per_epoch, shuffle_buffer,
         rank = compute.rank](std::int64_t epoch) {
          auto batches = shards->batches(rank, batch, seed, epoch, shuffle_buffer);
          batches.resize(static_cast<std::size_t>(per_epoch));
          return batches;
        },
        per_epoch, c.epochs, compute.pipeline, update_ * c.micro_batches_per_update + resume_micro_);
    train_feeder_ = std::make_unique<DeviceBatchFeeder>(*train_pipeline_, device_);
    if (c.test_set)
      evaluator_ = std::make_unique<Evaluator>(
          SampleSource{*c.test_set, *c.eval_preprocessing, s.run.seed, compute.rank, compute.world_size},
          s.eval.batch_size, device_, c.epochs + 1, compute.pipeline);
  }

  RunStatus run() {
    const std::int64_t U = c_.updates_per_epoch;
    hooks_.train_begins(TrainBegin{*c_.model,
                                   c_.input,
                                   s_.run.batch_size,
                                   update_,
                                   c_.total_updates,
                                   U,
                                   device_},
                        last_epoch_);
    last_step_end_ = Clock::now();
    // Stopped after an epoch's last update but before its evaluation: do it now.
    if (update_ > 0 && update_ % U == 0 && resume_micro_ == 0 && evaluated_at_step_ != update_ &&
        eval_due(update_ / U))
      run_eval(update_ / U);
    for (std::int64_t epoch = update_ / U; epoch < c_.epochs && update_ < c_.total_updates; ++epoch) {
      if (!dim_reduce_ && s_.dim_reduce.enabled && epoch + 1 >= s_.dim_reduce.from_epoch) start_dim_reduce(false);
      train_epoch(epoch);
      if (stopped_ || hooks_.stop_reason()) break;
      if (eval_due(epoch + 1)) run_eval(epoch + 1);
      if (checkpointer_.due_after_epoch(epoch + 1) && update_ < c_.total_updates) save_checkpoint("epoch");
      if (snapshots_) save_snapshot_if_due(snapshots_->due_after_epoch(epoch + 1));
    }
    flush_window(last_epoch_);
    if (collective_ && stopped_) gather_rank_rows(last_epoch_);
    if (stopped_) {
      progress_.finish();
      const std::string why = (stop_.signal_number() ? "stopped by signal " + std::to_string(stop_.signal_number())
                                                     : std::string("stopped on request")) +
                              " at step " + std::to_string(update_) +
                              (stopped_micro_ ? " (+" + std::to_string(stopped_micro_) + " micro-batches)" : "");
      store_.record_event(run_id_, "interrupted", why);
      if (s_.checkpoint.on_signal) save_checkpoint("signal");
      progress_.message("interrupted: " + why + "; run recorded as interrupted" +
                        (checkpointer_.newest().empty() ? "" : "; continue it with --resume"));
      hooks_.train_ended(TrainEnd{update_, TrainEndReason::interrupted}, last_epoch_);
      return RunStatus::interrupted;
    }
    // A hook's stop ends the run as its last update would: within the epoch
    // it reached, evaluated and saved.
    const bool hook_stopped = hooks_.stop_reason().has_value() && update_ < c_.total_updates;
    if (hook_stopped) progress_.message("stopped at step " + std::to_string(update_) + ": " + *hooks_.stop_reason());
    if (evaluator_ && evaluated_at_step_ != update_) run_eval(hook_stopped ? last_epoch_ : c_.epochs);
    if (s_.checkpoint.at_end) save_checkpoint("end");
    progress_.finish();
    hooks_.train_ended(TrainEnd{update_, hook_stopped ? TrainEndReason::stopped_by_hook : TrainEndReason::finished},
                       last_epoch_);
    return RunStatus::finished;
  }

  std::int64_t steps() const { return update_; }

 private:
  ModelOutput forward_train(const at::Tensor& images) {
    AutocastScope autocast(device_.type(), s_.precision.mode);
    return c_.model->forward_train(images);
  }

  at::Tensor cross_entropy(const at::Tensor& logits, const at::Tensor& labels) const {
    return at::cross_entropy_loss(logits.to(at::kFloat), labels, {}, at::Reduction::Mean, /*ignore_index=*/-100,
                                  s_.label_smoothing);
  }

  // The auxiliary classifiers' losses, weighted, each also logged as train/<name>_loss.
  at::Tensor weighted_aux_loss(const std::map<std::string, at::Tensor>& aux_logits, const at::Tensor& labels) {
    at::Tensor total;
    for (const auto& [name, logits] : aux_logits) {
      const auto weight = c_.aux_weights.find(name);
      if (weight == c_.aux_weights.end())
        throw Error("[model] " + s_.model_plugin + " returned auxiliary logits '" + name +
                    "' that its ModelMeta does not declare (a plugin bug)");
      const auto loss = cross_entropy(logits, labels);
      window_.add_scalar("train/" + name + "_loss", loss.detach());
      total = total.defined() ? total + weight->second * loss : weight->second * loss;
    }
    return total;
  }

  // One micro-batch: forward, loss, backward. Returns the loss, on the device.
  // Only the update's last micro-batch all-reduces its gradients (`last`).
  at::Tensor micro_batch(const Batch& batch, StepTiming& timing, bool last) {
    auto t0 = Clock::now();
    // uint8 over the bus, a quarter of float32; converted and normalized on the device.
    auto images = c_.train_preprocessing->finish_batch(batch.images);
    if (channels_last_) images = images.contiguous(at::MemoryFormat::ChannelsLast);
    const auto& labels = batch.labels;
    timing.data_wait_s += seconds_between(t0, Clock::now());
    if (dim_reduce_) {  // its line search evaluates this batch again
      dim_reduce_images_ = images;
      dim_reduce_labels_ = labels;
    }
    timer_.compute_begins();
    // Loss in fp32 whatever the autocast dtype; divided so that accumulated
    // micro-batch gradients are the mean over the whole update's batch.
    // train/loss is the main classifier's; auxiliary losses are logged apart.
    const ModelOutput output = forward_train(images);
    const auto loss = cross_entropy(output.logits, labels);
    window_.count_hits(output.logits.detach(), labels);
    auto objective = loss;
    if (!output.aux_logits.empty())
      if (const auto aux = weighted_aux_loss(output.aux_logits, labels); aux.defined()) objective = loss + aux;
    if (reducer_) reducer_->set_communicating(last);
    scaler_.scale(objective / static_cast<double>(c_.micro_batches_per_update)).backward();
    timer_.compute_ends();
    // Rank 0's row is the job's step: the images of all its ranks (migration 4).
    timing.images += labels.size(0) * (collective_ && leader_ ? collective_->world_size() : 1);
    return loss.detach();
  }

  // A data-parallel job's one small all-reduce per update: the sum of the
  // ranks' losses (train/loss and on_nonfinite = "skip" then see the mean over
  // the whole global batch, the same on every rank), of their stop requests
  // (so every rank stops after the same update) and of rank 0's time-based
  // checkpoint wish (so every rank saves together). Returns the mean loss.
  at::Tensor agree_on_update(const at::Tensor& loss) {
    const bool stop_here = stop_.requested() ||
                           (stop_after_micro_batches_ > 0 && micro_batches_run_ >= stop_after_micro_batches_);
    const bool save_by_time = leader_ && checkpointer_.due_by_time();
    const auto flags = at::tensor({stop_here ? 1.0F : 0.0F, save_by_time ? 1.0F : 0.0F}).to(loss.device());
    auto agreement = at::cat({loss.detach().reshape({1}).to(at::kFloat), flags});
    collective_->all_reduce_sum(agreement);
    const auto agreed = agreement.to(at::kCPU);
    agreed_stop_ = agreed[1].item<float>() > 0;
    agreed_time_checkpoint_ = agreed[2].item<float>() > 0;
    return agreement[0] / static_cast<double>(collective_->world_size());
  }

  // Compression's exchange, in place of the all-reduce: the compressor
  // chooses what each rank sends, and the mean of what all ranks sent becomes
  // the gradient. Not done for an update that will be skipped, so a
  // non-finite gradient never enters the compressor's residuals. All of it,
  // compression included, is the step's communication time.
  void exchange_compressed(const at::Tensor& loss, StepTiming& timing) {
    if (s_.run.on_nonfinite == NonFinitePolicy::skip && !std::isfinite(loss.item<double>())) return;
    const auto start = Clock::now();
    for (auto& p : parameters_)  // a parameter the loss did not reach has a zero gradient
      if (!p.grad().defined()) p.mutable_grad() = at::zeros_like(p);
    const double epochs_done = static_cast<double>(update_) / static_cast<double>(c_.updates_per_epoch);
    const auto messages = c_.compressor->compress(CompressionStep{update_, epochs_done, wrapper_metrics_});
    const auto cost = exchange_->exchange(messages, s_.compression.plugin);
    timing.sync_s = seconds_between(start, Clock::now());
    if (collective_) timing.bytes_sent = cost.bytes_sent;
  }

  // Applies the accumulated gradients: unscale, skip if not finite, wrappers, optimizer.
  void apply_update(const at::Tensor& loss, double lr, std::int64_t epoch) {
    std::string skip_reason;
    at::Tensor found_inf;
    if (scaler_.enabled()) {
      std::vector<at::Tensor> grads;
      for (const auto& p : parameters_) grads.push_back(p.grad());
      found_inf = scaler_.unscale_(grads);
      // A sync, as torch.amp.GradScaler makes one: the step must be skipped on the host.
      if (LossScaler::found_inf_value(found_inf)) skip_reason = "inf/nan gradients at loss scale " + std::to_string(scaler_.scale_value());
    }
    // "skip" must know before stepping: one read of the loss (free on CPU).
    if (skip_reason.empty() && s_.run.on_nonfinite == NonFinitePolicy::skip && !std::isfinite(loss.item<double>()))
      skip_reason = "loss is not finite";
    if (skip_reason.empty()) {
      auto& groups = c_.optimizer->param_groups();
      for (std::size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lr * c_.groups[i].lr_scale);
      if (dim_reduce_) {
        take_dim_reduce_step(loss);
      } else {
        UpdateView view{*c_.optimizer, wrapper_metrics_, update_};
        for (auto& wrapper : c_.wrappers) wrapper->before_step(view);
        c_.optimizer->step();
        for (auto it = c_.wrappers.rbegin(); it != c_.wrappers.rend(); ++it) (*it)->after_step(view);
      }
    } else {
      ++skipped_;
      store_.record_event(run_id_, "skipped_update",
                          "update " + std::to_string(update_ + 1) + " (epoch " + std::to_string(epoch + 1) +
                              ") skipped: " + skip_reason);
    }
    if (scaler_.enabled()) scaler_.update(found_inf);
    c_.optimizer->zero_grad();
  }

  // [snapshots] and [dim_reduce]: stage 1 saves weight snapshots (rank 0;
  // every rank's weights are the same), stage 2 builds its PCA projection.
  // With from_epoch > 1 (both stages in this run) stage 2 starts at that
  // epoch, from this run's own snapshots, unless `resumed_at` (a
  // checkpoint's update) is already past its start.
  void set_up_dim_reduce(const TrainOptions& options, std::optional<std::int64_t> resumed_at) {
    for (const auto& group : c_.groups)
      for (const auto& parameter : group.parameters) trainable_.emplace_back(parameter.name, parameter.tensor);
    const std::string snapshot_directory =
        s_.snapshots.dir.empty() ? run_directory_under(directory_beside_store(store_.path(), "snapshots"), run_id_)
                                 : s_.snapshots.dir;
    if (s_.snapshots.policy.enabled() && leader_)
      snapshots_ = std::make_unique<WeightSnapshots>(s_.snapshots.policy, snapshot_directory);
    if (!s_.dim_reduce.enabled) return;
    dim_reduce_settings_ = s_.dim_reduce;
    if (dim_reduce_settings_.snapshots.empty() && s_.snapshots.policy.enabled())
      dim_reduce_settings_.snapshots = snapshot_directory;
    const std::string artifacts =
        options.artifact_root.empty() ? directory_beside_store(store_.path(), kArtifactDirectory) : options.artifact_root;
    dim_reduce_pca_path_ = run_directory_under(artifacts, run_id_) + "/pca_mat.safetensors";
    const bool whole_run = s_.dim_reduce.from_epoch <= 1;
    const bool resumed_in_stage_two =
        resumed_at && *resumed_at > (s_.dim_reduce.from_epoch - 1) * c_.updates_per_epoch;
    if (whole_run || resumed_in_stage_two) start_dim_reduce(resumed_at.has_value());
  }

  // Builds stage 2: the PCA (computed, or read back when `resuming`) and the
  // quasi-Newton state that replaces the optimizer's step from now on.
  void start_dim_reduce(bool resuming) {
    dim_reduce_ = std::make_unique<DimReduceTraining>(
        dim_reduce_settings_, trainable_,
        [this](at::Tensor& tensor) {
          if (collective_) collective_->broadcast(tensor);
        },
        leader_, dim_reduce_pca_path_, resuming,
        [this](const std::string& line) {
          store_.record_event(run_id_, "dim_reduce", line);
          progress_.message(line);
        });
  }

  // Stage 2's update in place of the optimizer's. The line search's losses
  // are the main classifier's on this update's batch (the loss it compares
  // them with), averaged over the ranks like the gradient.
  void take_dim_reduce_step(const at::Tensor& loss) {
    const auto step = dim_reduce_->update(loss.item<double>(), [this] {
      auto value = cross_entropy(forward_train(dim_reduce_images_).logits, dim_reduce_labels_)
                       .detach()
                       .to(at::kDouble)
                       .reshape({1});
      if (collective_) {
        collective_->all_reduce_sum(value);
        value /= static_cast<double>(collective_->world_size());
      }
      return value.item<double>();
    });
    wrapper_metrics_["train/dim_reduce_step"] = at::scalar_tensor(step.step, at::kDouble);
    wrapper_metrics_["train/dim_reduce_trials"] = at::scalar_tensor(static_cast<double>(step.trials), at::kDouble);
  }

  void save_snapshot_if_due(bool due) {
    if (!snapshots_ || !due) return;
    const std::string path = snapshots_->save(trainable_, update_, last_epoch_);
    store_.record_event(run_id_, "snapshot", "weight snapshot at step " + std::to_string(update_) + ": " + path);
    last_step_end_ = Clock::now();  // saving is not the next step's time
  }

  // Alone: a signal (or the test's micro-batch count) stops at once. In a
  // data-parallel job only what all ranks agreed on after the last update,
  // so no rank is left waiting in a collective for one that stopped.
  bool stop_requested() const {
    if (collective_) return agreed_stop_;
    return stop_.requested() ||
           (stop_after_micro_batches_ > 0 && micro_batches_run_ >= stop_after_micro_batches_);
  }

  bool eval_due(std::int64_t epoch) const {
    return evaluator_ && s_.eval.every_epochs > 0 && epoch % s_.eval.every_epochs == 0;
  }

  void train_epoch(std::int64_t epoch) {
    c_.model->train();
    last_epoch_ = epoch + 1;
    const std::int64_t M = c_.micro_batches_per_update;
    for (std::int64_t u = update_ - epoch * c_.updates_per_epoch;
         u < c_.updates_per_epoch && update_ < c_.total_updates; ++u) {
      if (stop_requested()) {
        stopped_ = true;
        return;
      }
      if (hooks_.stop_reason()) return;
      hooks_.update_begins(update_ + 1);
      StepTiming timing;
      share_rank0_buffers();
      const std::int64_t first_micro = resume_micro_;
      at::Tensor loss_sum = partial_loss_;
      resume_micro_ = 0;
      partial_loss_ = at::Tensor();
      for (std::int64_t m = first_micro; m < M; ++m) {
        // A stop between micro-batches keeps the gradients accumulated so
        // far: the checkpoint holds them, and --resume goes on from here.
        if (m > first_micro && !collective_ && stop_requested()) {
          stopped_ = true;
          stopped_micro_ = m;
          partial_loss_ = loss_sum;
          return;
        }
        const auto t0 = Clock::now();
        auto batch = train_feeder_->next();  // on the device
        timing.data_wait_s += seconds_between(t0, Clock::now());
        if (!batch) throw Error("the data pipeline ended early at update " + std::to_string(update_) + " (a bug)");
        const auto loss = micro_batch(*batch, timing, m == M - 1);
        loss_sum = loss_sum.defined() ? loss_sum + loss : loss;
        ++micro_batches_run_;
      }
      if (reducer_) {
        timing.sync_s = reducer_->finish_reduction();
        timing.bytes_sent = reducer_->bytes_per_update();
        timer_.sync_ends();
      }
      const auto local_loss = M > 1 ? loss_sum / static_cast<double>(M) : loss_sum;
      const auto loss = collective_ ? agree_on_update(local_loss) : local_loss;
      if (exchange_) {
        exchange_compressed(loss, timing);
        timer_.sync_ends();
      }
      const double lr = c_.schedule->learning_rate(update_);
      apply_update(loss, lr, epoch);
      timer_.optimizer_ends();
      const auto t3 = Clock::now();
      ++update_;
      // Every second between two updates' ends belongs to one of them: what is
      // not data, compute or optimizer (logging, the store) shows as the rest
      // of total_s, so the report's images/s agrees with the clock.
      timing.step = update_;
      timing.epoch = epoch + 1;
      timing.total_s = seconds_between(last_step_end_, t3);
      timing.learning_rate = lr;
      // Rank 0 logs the job's mean loss; the other ranks' rows keep their own.
      window_.add_update(timing, leader_ ? loss : local_loss);
      // By count and by time: a kill loses at most flush_secs of step rows.
      if (update_ % s_.run.log_every == 0 || update_ == c_.total_updates ||
          seconds_between(last_flush_, t3) >= s_.flush_seconds)
        flush_window(epoch + 1);
      if (collective_ && (update_ % s_.run.log_every == 0 || update_ == c_.total_updates))
        gather_rank_rows(epoch + 1);
      progress_.update({epoch + 1, c_.epochs, update_, c_.total_updates, recent_loss_, lr}, timing.images);
      if (!hooks_.empty())
        hooks_.update_ended(StepView{update_, c_.total_updates, epoch + 1, lr, loss, timing.images, timing.total_s,
                                     timing.data_wait_s});
      const auto reason = collective_ ? checkpointer_.due_after_update(update_, agreed_time_checkpoint_)
                                      : checkpointer_.due_after_update(update_);
      if (reason && update_ < c_.total_updates)
        save_checkpoint(*reason);
      if (snapshots_) save_snapshot_if_due(snapshots_->due_after_update(update_, epoch + 1));
      last_step_end_ = Clock::now();
      if (update_ == c_.total_updates) last_step_end_ = t3;
    }
  }

  // Everything a resumed run needs to take the same steps as this one.
  void save_checkpoint(const std::string& reason) {
    // Every rank comes here together; the gather comes before any test only
    // rank 0 can answer, so no rank is left waiting in it.
    gather_compression_state();
    if (checkpointer_.saved_at(update_, stopped_micro_)) return;
    flush_window(last_epoch_);  // the store then shows every step up to the checkpoint
    if (!leader_) return;       // rank 0 writes the job's checkpoints
    CheckpointContent content;
    CheckpointMeta& meta = content.meta;
    meta.orchestrate_version = version();
    meta.run_id = run_id_;
    meta.step = update_;
    meta.micro_batch = stopped_micro_;
    meta.epoch = last_epoch_;
    meta.evaluated_at_step = evaluated_at_step_;
    meta.reason = reason;
    meta.created_at = utc_now_iso();
    meta.run_name = s_.run.name;
    meta.model = s_.model_plugin;
    meta.input_shape = {c_.input.channels, c_.input.height, c_.input.width};
    meta.num_classes = c_.input.num_classes;
    meta.class_names = c_.train_set->info().class_names;
    meta.world_size = collective_ ? collective_->world_size() : 1;
    meta.metrics = latest_metrics_;
    for (const auto& [key, value] : recipe_.flattened()) meta.recipe_params[key] = value;
    content.weights = model_state(*c_.model);
    if (dim_reduce_) dim_reduce_state_ = dim_reduce_->state();
    content.trainer_state = save_trainer_state(state_refs(), stopped_micro_ > 0);
    content.recipe_toml = recipe_.resolved_toml();
    const std::string path = checkpointer_.save(std::move(content));
    if (!path.empty()) progress_.message("saved checkpoint " + path + " (" + reason + ")");
    last_step_end_ = Clock::now();  // saving is not the next step's time
  }

  TrainerStateRefs state_refs() {
    return TrainerStateRefs{*c_.optimizer, c_.wrappers,   scaler_,
                            parameters_,   partial_loss_, skipped_,
                            eval_seconds_, compression_by_rank_, dim_reduce_state_};
  }

  // Rank r's compressor state (its residuals) at index r of compression_by_rank_.
  void gather_compression_state() {
    if (!c_.compressor) return;
    const auto mine = flatten_state(c_.compressor->state());
    if (mine.numel() == 0) return;  // a stateless compressor (the same on every rank)
    compression_by_rank_ = collective_ ? collective_->all_gather(mine.to(collective_->device())) : std::vector{mine};
  }

  // The saved state this rank continues from: its own when the job has as
  // many ranks as the one that saved, otherwise the mean over the saved
  // ranks (the residuals are linear: the mean keeps what the ranks had yet
  // to send, on average; gradient_compression.h's contract).
  void restore_compression_state() {
    if (!c_.compressor || compression_by_rank_.empty()) return;
    const int world = collective_ ? collective_->world_size() : 1;
    const int rank = collective_ ? collective_->rank() : 0;
    const at::Tensor chosen = static_cast<int>(compression_by_rank_.size()) == world
                                  ? compression_by_rank_[rank]
                                  : at::stack(compression_by_rank_).mean(0);
    c_.compressor->load_state(unflatten_state(chosen.to(device_), c_.compressor->state()));
  }

  void restore(const CheckpointMeta& meta, const std::string& path) {
    namespace fs = std::filesystem;
    // The pipeline skips step x M + micro_batch micro-batches: a position
    // inside an update that has fewer is a damaged description.
    if (meta.micro_batch >= c_.micro_batches_per_update)
      throw Error("checkpoint " + path + " is " + std::to_string(meta.micro_batch) +
                  " micro-batches into an update of " + std::to_string(c_.micro_batches_per_update) +
                  "; its checkpoint.json is damaged: use an older checkpoint of the run");
    load_model_state(*c_.model, read_safetensors((fs::path(path) / kWeightsFile).string()), path);
    if (dim_reduce_) dim_reduce_state_ = dim_reduce_->state();  // the names to read
    load_trainer_state((fs::path(path) / kTrainerStateFile).string(), state_refs(), meta.micro_batch > 0);
    if (dim_reduce_) dim_reduce_->load_state(dim_reduce_state_, path);
    restore_compression_state();
    if (partial_loss_.defined()) partial_loss_ = partial_loss_.to(device_);
    update_ = meta.step;
    resume_micro_ = meta.micro_batch;
    evaluated_at_step_ = meta.evaluated_at_step;
    last_epoch_ = meta.epoch;
    latest_metrics_ = meta.metrics;
  }

  // Writes the window's step rows and train/* metrics: the one read of the
  // device in a steady-state step (see log_window.h).
  void flush_window(std::int64_t epoch) {
    if (window_.empty()) return;
    auto summary = window_.flush(epoch);
    last_flush_ = Clock::now();
    if (!leader_) rank_rows_.insert(rank_rows_.end(), summary.rows.begin(), summary.rows.end());
    recent_loss_ = summary.mean_loss;
    latest_metrics_["train/loss"] = summary.mean_loss;
    auto& metrics = summary.metrics;  // all of this log point's, in one commit
    const bool diverged = summary.first_nonfinite_step >= 0 && s_.run.on_nonfinite == NonFinitePolicy::stop;
    if (!diverged) {
      metrics.emplace_back("train/reg_loss", regularization_loss());
      for (const auto& [name, value] : wrapper_metrics_)
        if (value.defined()) metrics.emplace_back(name, value.item<double>());
      if (scaler_.enabled()) {
        metrics.emplace_back("train/loss_scale", scaler_.scale_value());
        metrics.emplace_back("train/skipped_updates", static_cast<double>(skipped_));
      }
    }
    store_.record_metrics(run_id_, summary.last_step, epoch, metrics);
    if (diverged) {
      const std::string why = "training diverged: loss is " + std::to_string(summary.first_nonfinite_loss) +
                              " at step " + std::to_string(summary.first_nonfinite_step) +
                              "; lower [optimizer] lr, set [run] on_nonfinite = \"skip\", or check the data";
      store_.record_event(run_id_, "nonfinite_loss", why);
      throw Error(why);
    }
  }

  // 0.5 * sum over groups of weight_decay * |w|^2: the L2 term weight decay
  // adds to the loss (the LARS seed logs it as reg_loss beside ent_loss).
  double regularization_loss() const {
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

  // Brings the step rows of ranks 1.. to rank 0's store, tagged with their
  // rank. Called by every rank at the same updates (every log_every, the last
  // one, a stop): each flushes its window, then two all-gathers carry the
  // row counts and the rows.
  void gather_rank_rows(std::int64_t epoch) {
    flush_window(epoch);
    constexpr std::int64_t kFields = 12;
    const auto options = at::TensorOptions().dtype(at::kDouble).device(collective_->device());
    auto count = at::full({1}, static_cast<double>(rank_rows_.size()), options);
    const auto counts = collective_->all_gather(count);
    std::int64_t most = 0;
    for (const auto& c : counts) most = std::max(most, static_cast<std::int64_t>(c.item<double>()));
    if (most == 0) return;
    auto mine = at::zeros({most, kFields}, at::kDouble);
    auto* out = mine.data_ptr<double>();
    for (const auto& row : rank_rows_) {
      for (const double value : {static_cast<double>(row.step), static_cast<double>(row.epoch),
                                 static_cast<double>(row.images), row.data_wait_s, row.compute_s, row.sync_s,
                                 row.optimizer_s, row.total_s, row.loss, row.learning_rate,
                                 static_cast<double>(collective_->rank()), static_cast<double>(row.bytes_sent)})
        *out++ = value;
    }
    rank_rows_.clear();
    const auto all = collective_->all_gather(mine.to(collective_->device()));
    if (!leader_) return;
    for (std::size_t r = 1; r < all.size(); ++r) {
      const auto rows = all[r].to(at::kCPU).contiguous();
      const double* in = rows.data_ptr<double>();
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(counts[r].item<double>()); ++i, in += kFields) {
        StepTiming row;
        row.step = static_cast<std::int64_t>(in[0]);
        row.epoch = static_cast<std::int64_t>(in[1]);
        row.images = static_cast<std::int64_t>(in[2]);
        row.data_wait_s = in[3];
        row.compute_s = in[4];
        row.sync_s = in[5];
        row.optimizer_s = in[6];
        row.total_s = in[7];
        row.loss = in[8];
        row.learning_rate = in[9];
        row.rank = static_cast<int>(in[10]);
        row.bytes_sent = static_cast<std::int64_t>(in[11]);
        store_.record_step(run_id_, row);
      }
    }
  }

  // Batch-norm statistics as DDP keeps them: every rank uses rank 0's, sent
  // before each update and before evaluating, so all ranks' models are equal.
  void share_rank0_buffers() {
    if (!collective_) return;
    const auto buffers = c_.model->buffers();
    if (!buffers.empty()) collective_->broadcast_in_place(buffers);
  }

  void run_eval(std::int64_t epoch) {
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
      latest_metrics_[name] = value;
    }
    evaluated_at_step_ = update_;
    const double seconds = seconds_between(start, Clock::now());
    eval_seconds_ += seconds;
    metrics.emplace_back("time/eval_s", eval_seconds_);
    store_.record_metrics(run_id_, update_, epoch, metrics);
    std::ostringstream line;
    line << "eval after epoch " << epoch << " (step " << update_ << "): " << format_eval(r) << "  (" << r.examples
         << " images, " << std::fixed << std::setprecision(1) << seconds << " s)";
    store_.record_event(run_id_, "eval", line.str());
    progress_.message(line.str());
    last_step_end_ = Clock::now();  // evaluation time is the event's, not the next step's
  }

  const Recipe& recipe_;
  const Settings& s_;
  TrainingComponents& c_;
  RunStore& store_;
  const std::int64_t run_id_;
  const c10::Device device_;
  const bool channels_last_;
  LossScaler scaler_;
  PhaseTimer timer_;
  LogWindow window_;
  std::ostringstream null_stream_;
  ProgressLine progress_;
  const StopSignal& stop_;
  const std::int64_t stop_after_micro_batches_;
  Checkpointer& checkpointer_;
  RunHooks& hooks_;
  Collective* const collective_;  // null when training alone
  const bool leader_;             // records the run: alone, or rank 0
  std::unique_ptr<GradientReducer> reducer_;             // dense all-reduce, without a compressor
  std::unique_ptr<CompressedGradientExchange> exchange_;  // with a compressor, alone too
  std::vector<at::Tensor> compression_by_rank_;          // see TrainerStateRefs
  bool agreed_stop_ = false;
  bool agreed_time_checkpoint_ = false;
  std::vector<StepTiming> rank_rows_;  // ranks 1..: written since the last gather_rank_rows
  std::unique_ptr<BatchPipeline> train_pipeline_;
  std::unique_ptr<DeviceBatchFeeder> train_feeder_;  // reads train_pipeline_, so destroyed first
  std::unique_ptr<Evaluator> evaluator_;
  std::vector<at::Tensor> parameters_;
  std::map<std::string, at::Tensor> wrapper_metrics_;
  Clock::time_point last_step_end_;
  std::int64_t update_ = 0;
  std::int64_t skipped_ = 0;
  double recent_loss_ = 0;
  double eval_seconds_ = 0;  // all evaluations so far
  std::int64_t last_epoch_ = 0;  // 1-based epoch of the latest update
  Clock::time_point last_flush_ = Clock::now();
  std::int64_t micro_batches_run_ = 0;   // by this process
  std::int64_t resume_micro_ = 0;        // micro-batches of the next update already accumulated
  at::Tensor partial_loss_;              // their summed loss
  bool stopped_ = false;
  std::int64_t stopped_micro_ = 0;       // micro-batches of update_ + 1 done when the stop came
  std::int64_t evaluated_at_step_ = -1;
  std::map<std::string, double> latest_metrics_;  // for checkpoint records
  std::unique_ptr<WeightSnapshots> snapshots_;    // [snapshots], on rank 0
  NamedParameters trainable_;                      // by name: what snapshots save and stage 2 projects
  std::unique_ptr<DimReduceTraining> dim_reduce_;  // [dim_reduce] enabled, once stage 2 has started
  DimReduceSettings dim_reduce_settings_;           // with the snapshot directory resolved
  std::string dim_reduce_pca_path_;                 // where the run saves its PCA matrix
  std::vector<std::pair<std::string, at::Tensor>> dim_reduce_state_;  // see TrainerStateRefs
  at::Tensor dim_reduce_images_, dim_reduce_labels_;  // the update's batch, for the line search
};

}  // namespace

namespace {

std::string transfer_summary(const std::vector<TensorRecord>& records) {
  std::map<std::string, std::vector<std::string>> by_action;
  for (const auto& r : records) by_action[r.action].push_back(r.name);
  std::string out;
  for (const auto& [action, names] : by_action) {
    out += (out.empty() ? "" : "; ") + action + " " + std::to_string(names.size()) + ":";
    for (std::size_t i = 0; i < names.size() && i < 6; ++i) out += " " + names[i];
    if (names.size() > 6) out += " ...";
  }
  return out;
}

// What every rank's hooks are told: their rank, and the job's run (rank 0's
// id: the other ranks record into scratch stores of their own).
HookContext hook_context(const TrainOptions& options, const RunStore& store, std::int64_t run_id,
                         bool any_hooks) {
  HookContext context;
  context.run_id = run_id;
  if (options.collective) {
    context.rank = options.collective->rank();
    context.world_size = options.collective->world_size();
  }
  if (options.collective && any_hooks) {  // the same recipe, so the same choice, on every rank
    auto id = at::full({1}, static_cast<double>(run_id), at::TensorOptions().dtype(at::kDouble))
                  .to(options.collective->device());
    options.collective->broadcast_in_place({id});
    context.run_id = static_cast<std::int64_t>(id.item<double>());
  }
  const std::string root = options.artifact_root.empty() ? directory_beside_store(store.path(), kArtifactDirectory)
                                                         : options.artifact_root;
  context.artifact_dir = run_directory_under(root, context.run_id);
  return context;
}

// [export]: the finished run's model, served as it was evaluated last.
std::string export_finished_run(const Settings& s, TrainingComponents& c, RunStore& store, std::int64_t run_id,
                                std::int64_t steps, const std::string& checkpoint) {
  ServableModel servable{c.model, c.input, c.train_set->info().class_names, s.run.name, {},
                         c.eval_preprocessing->serving_transform()};
  servable.provenance = {{"run_id", std::to_string(run_id)}, {"step", std::to_string(steps)},
                         {"model", s.model_plugin}, {"checkpoint", checkpoint}};
  if (const auto summary = store.find_run(std::to_string(run_id)))
    for (const auto& [name, value] : summary->final_metrics) servable.provenance["metric." + name] = std::to_string(value);
  try {
    const ExportedVersion exported = export_for_serving(servable, s.export_);
    store.record_event(run_id, "export",
                       "serving model version " + std::to_string(exported.version) + " in " + exported.version_dir);
    return exported.version_dir;
  } catch (const std::exception& e) {
    throw Error("training finished but the serving export failed: " + exception_reason(e) +
                (checkpoint.empty() ? std::string()
                                    : "; the weights are in " + checkpoint + ": orchestrate export serving " +
                                          checkpoint + " --out " + s.export_.dir));
  }
}

}  // namespace

TrainOutcome train(const Recipe& recipe, const Registry& registry, RunStore& store, const TrainOptions& options) {
  const auto start = Clock::now();
  const Settings s = settings_of(recipe);
  const ComputeSetup compute =
      set_up_compute(s, options.collective ? options.collective->environment() : LaunchEnvironment{});
  const bool leader = !options.collective || options.collective->rank() == 0;

  // Checked before anything is written: a resume the recipe cannot continue,
  // and a checkpoint directory that cannot be written.
  std::optional<CheckpointMeta> resume;
  std::vector<std::string> resume_changes;
  if (!options.resume_from.empty()) {
    resume = read_checkpoint_meta(options.resume_from);
    resume_changes = check_resume_recipe(*resume, options.resume_from, recipe, compute.world_size);
    if (leader && !store.find_run(std::to_string(resume->run_id)))
      throw UsageError("--resume " + options.resume_from + ": its run " + std::to_string(resume->run_id) +
                       " is not in " + store.path() + "; pass the run store it was recorded in with --db");
  }
  const std::string checkpoint_dir_root = checkpoint_root(s.checkpoint, store.path());
  if (leader) {
    require_writable_directory(checkpoint_dir_root, "[checkpoint] dir");
    if (!s.export_.dir.empty()) require_writable_directory(s.export_.dir, "[export] dir");
  }
  store.set_flush_interval(std::chrono::duration<double>(s.flush_seconds));

  // Installed before the run row exists: a Ctrl-C while the data loads still
  // ends with the run recorded as interrupted, never left "running".
  const StopSignal stop;
  TrainOutcome outcome;
  const auto run_start = Clock::now();  // the run row's started_at
  if (resume && leader) {
    outcome.run_id = resume->run_id;
    outcome.resumed = true;
    std::string message = "resumed from " + options.resume_from + " at step " + std::to_string(resume->step);
    if (resume->micro_batch) message += " (+" + std::to_string(resume->micro_batch) + " micro-batches)";
    if (!resume_changes.empty()) {
      message += "; recipe changes:";
      for (const auto& change : resume_changes) message += " " + change + ";";
    }
    store.resume_run(outcome.run_id, resume->step, message);
  } else {
    RunRecord record = run_record_of(recipe, s, registry, compute.device);
    record.world_size = compute.world_size;
    outcome.run_id = store.begin_run(record);
  }
  try {
    // Built once the run is recorded, so a data set that fails to load, or
    // init_from weights that do not fit the model, leave a failed run that
    // says why (and setup_s covers the loading).
    RunDataEvents data_events(store, outcome.run_id);  // outlives the datasets, which report into it
    TrainingComponents components = build_components(s, registry, compute, &data_events);
    store.record_event(outcome.run_id, "threads",
                       "intra_op=" + std::to_string(compute.intra_op_threads) + " data_workers=" + std::to_string(s.run.num_workers) +
                           " cores=" + std::to_string(usable_cores()));
    if (!components.tensor_records.empty() && !resume) {
      store.record_tensors(outcome.run_id, components.tensor_records);
      store.record_event(outcome.run_id, "init_from",
                         (s.checkpoint.init_from.empty() ? std::string("no init_from")
                                                         : "from " + s.checkpoint.init_from) +
                             ": " + transfer_summary(components.tensor_records));
    }
    Checkpointer checkpointer(s.checkpoint, run_directory_under(checkpoint_dir_root, outcome.run_id), store,
                              outcome.run_id);
    RunHooks hooks(s.hooks, registry, hook_context(options, store, outcome.run_id, !s.hooks.empty()), store,
                   outcome.run_id);
    TrainingRun run(recipe, s, components, store, outcome.run_id, compute, options, stop, checkpointer, hooks,
                    resume ? &*resume : nullptr);
    if (!resume) store.record_metric(outcome.run_id, 0, 0, "time/setup_s", seconds_between(run_start, Clock::now()));
    outcome.status = run.run();
    outcome.steps = run.steps();
    outcome.checkpoint = checkpointer.newest();
    if (outcome.status == RunStatus::finished && !s.export_.dir.empty() && leader)
      outcome.exported = export_finished_run(s, components, store, outcome.run_id, outcome.steps, outcome.checkpoint);
    store.finish_run(outcome.run_id, outcome.status);
  } catch (const std::exception& e) {
    fail_run(store, outcome.run_id, e, "training");
  }
  outcome.wall_s = seconds_between(start, Clock::now());
  if (auto summary = store.find_run(std::to_string(outcome.run_id))) outcome.final_metrics = summary->final_metrics;
  return outcome;
}

}  // namespace orchestrate

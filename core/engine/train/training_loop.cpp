// The step loop: epochs of updates of micro-batches. Each concern is a part
// (training_run.h); this file only says in which order they act.
#include "orchestrate/error.h"
#include "run_store.h"
#include "train/objective.h"
#include "train/rank_messages.h"
#include "train/training_run.h"
#include "elapsed_seconds.h"

namespace orchestrate {

RunStatus TrainingRun::run() {
  const std::int64_t U = c_.updates_per_epoch;
  hooks_.train_begins(TrainBegin{*c_.model, c_.input, s_.run.batch_size, at_.update, c_.total_updates, U, device_},
                      at_.last_epoch);
  last_step_end_ = Clock::now();
  // Stopped after an epoch's last update but before its evaluation: do it now.
  if (at_.update > 0 && at_.update % U == 0 && at_.resume_micro == 0 && at_.evaluated_at_step != at_.update &&
      eval_due(at_.update / U))
    run_eval(at_.update / U);
  for (std::int64_t epoch = at_.update / U; epoch < c_.epochs && at_.update < c_.total_updates; ++epoch) {
    stage2_.start_if_due(epoch);
    train_epoch(epoch);
    if (at_.stopped || hooks_.stop_reason()) break;
    if (eval_due(epoch + 1)) run_eval(epoch + 1);
    if (checkpointer_.due_after_epoch(epoch + 1) && at_.update < c_.total_updates) save_checkpoint("epoch");
    if (stage2_.snapshot_after_epoch(epoch + 1, at_.update)) last_step_end_ = Clock::now();
  }
  if (collective_ && at_.stopped)
    metrics_.log_point_with_rank_rows(at_.last_epoch);
  else
    metrics_.log_point(at_.last_epoch);
  if (at_.stopped) return finish_interrupted();
  // A hook's stop ends the run as its last update would: within the epoch
  // it reached, evaluated and saved.
  const bool hook_stopped = hooks_.stop_reason().has_value() && at_.update < c_.total_updates;
  if (hook_stopped) progress_.message("stopped at step " + std::to_string(at_.update) + ": " + *hooks_.stop_reason());
  if (evaluator_ && at_.evaluated_at_step != at_.update) run_eval(hook_stopped ? at_.last_epoch : c_.epochs);
  // A run resumed at its last step trained nothing: its checkpoint is
  // already the end, and saving it again would only add a copy.
  const bool trained_nothing = resumed_at_update_ == at_.update && at_.resume_micro == 0;
  if (trained_nothing)
    say("run had already finished at step " + std::to_string(at_.update) + ": nothing to train");
  else if (s_.checkpoint.at_end)
    save_checkpoint("end");
  progress_.finish();
  hooks_.train_ended(TrainEnd{at_.update, hook_stopped ? TrainEndReason::stopped_by_hook : TrainEndReason::finished},
                     at_.last_epoch);
  return RunStatus::finished;
}

void TrainingRun::train_epoch(std::int64_t epoch) {
  c_.model->train();
  at_.last_epoch = epoch + 1;
  const std::int64_t M = c_.micro_batches_per_update;
  for (std::int64_t u = at_.update - epoch * c_.updates_per_epoch;
       u < c_.updates_per_epoch && at_.update < c_.total_updates; ++u) {
    if (stop_requested()) {
      at_.stopped = true;
      return;
    }
    if (hooks_.stop_reason()) return;
    note_training_step(at_.update + 1);  // for a crash report (crash_handler.h)
    hooks_.update_begins(at_.update + 1);
    StepTiming timing;
    share_rank0_buffers();
    const std::int64_t first_micro = at_.resume_micro;
    at::Tensor loss_sum = at_.partial_loss;
    at_.resume_micro = 0;
    at_.partial_loss = at::Tensor();
    for (std::int64_t m = first_micro; m < M; ++m) {
      // A stop between micro-batches keeps the gradients accumulated so
      // far: the checkpoint holds them, and --resume goes on from here.
      if (m > first_micro && !collective_ && stop_requested()) {
        at_.stopped = true;
        at_.stopped_micro = m;
        at_.partial_loss = loss_sum;
        return;
      }
      const auto t0 = Clock::now();
      auto batch = train_feeder_->next();  // on the device
      timing.data_wait_s += seconds_between(t0, Clock::now());
      if (!batch) throw Error("the data pipeline ended early at update " + std::to_string(at_.update) + " (a bug)");
      const auto loss = micro_batch(*batch, timing, m == M - 1);
      loss_sum = loss_sum.defined() ? loss_sum + loss : loss;
      ++at_.micro_batches_run;
    }
    sync_.after_backward(timing, metrics_.timer());
    const auto local_loss = M > 1 ? loss_sum / static_cast<double>(M) : loss_sum;
    at::Tensor loss = local_loss;
    if (collective_) {
      const auto agreed = agree_on_update(*collective_, local_loss, local_stop(),
                                          leader_ && checkpointer_.due_by_time());
      loss = agreed.mean_loss;
      agreed_stop_ = agreed.stop;
      agreed_time_checkpoint_ = agreed.save_by_time;
    }
    const double epochs_done = static_cast<double>(at_.update) / static_cast<double>(c_.updates_per_epoch);
    sync_.exchange_compressed(c_.compressor && update_step_.skips_for_loss(loss),
                              CompressionStep{at_.update, epochs_done, update_step_.metrics()}, timing,
                              metrics_.timer());
    const double lr = [&] {
      const PluginCallScope in_schedule(c_.sites.schedule, "learning_rate");
      return c_.schedule->learning_rate(at_.update);
    }();
    update_step_.apply(loss, lr, at_.update, epoch, precision_, stage2_,
                       [this](const at::Tensor& images, const at::Tensor& labels) { return batch_loss(images, labels); });
    metrics_.timer().optimizer_ends();
    timing.learning_rate = lr;
    after_update(timing, loss, local_loss, epoch, Clock::now());
  }
}

// One micro-batch: forward, loss, backward. Returns the loss, on the device.
// Only the update's last micro-batch all-reduces its gradients (`last`).
at::Tensor TrainingRun::micro_batch(const Batch& batch, StepTiming& timing, bool last) {
  auto t0 = Clock::now();
  auto images = batch.images;  // finished by the feeder (DeviceBatchFeeder)
  if (channels_last_) images = images.contiguous(at::MemoryFormat::ChannelsLast);
  const auto& labels = batch.labels;
  timing.data_wait_s += seconds_between(t0, Clock::now());
  stage2_.remember_batch(images, labels);
  metrics_.timer().compute_begins();
  // Loss in fp32 whatever the autocast dtype; divided so that accumulated
  // micro-batch gradients are the mean over the whole update's batch.
  // train/loss is the main classifier's; auxiliary losses are logged apart.
  std::optional<PluginCallScope> in_model(std::in_place, c_.sites.model, "forward");
  const ModelOutput output = precision_.forward(*c_.model, images);
  const auto loss = cross_entropy(output.logits, labels, s_.label_smoothing);
  metrics_.window().count_hits(output.logits.detach(), labels);
  auto objective = loss;
  if (!output.aux_logits.empty())
    if (const auto aux = weighted_aux_loss(
            output.aux_logits, labels, c_.aux_weights, s_.label_smoothing, s_.model_plugin,
            [this](const std::string& name, const at::Tensor& value) { metrics_.window().add_scalar(name, value); });
        aux.defined())
      objective = loss + aux;
  sync_.before_backward(last);
  in_model.emplace(c_.sites.model, "backward");
  precision_.scale(objective / static_cast<double>(c_.micro_batches_per_update)).backward();
  in_model.reset();
  metrics_.timer().compute_ends();
  // Rank 0's row is the job's step: the images of all its ranks (migration 4).
  timing.images += labels.size(0) * (collective_ && leader_ ? collective_->world_size() : 1);
  return loss.detach();
}

// The update's end: its row, the log point or the rows' write, progress,
// hooks, and the checkpoint and snapshot the step or the clock asks for.
void TrainingRun::after_update(const StepTiming& done, const at::Tensor& loss, const at::Tensor& local_loss,
                               std::int64_t epoch, Clock::time_point end) {
  ++at_.update;
  // Every second between two updates' ends belongs to one of them: what is
  // not data, compute or optimizer (logging, the store) shows as the rest
  // of total_s, so the report's images/s agrees with the clock.
  StepTiming timing = done;
  timing.step = at_.update;
  timing.epoch = epoch + 1;
  timing.total_s = seconds_between(last_step_end_, end);
  // Rank 0 logs the job's mean loss; the other ranks' rows keep their own.
  metrics_.window().add_update(timing, leader_ ? loss : local_loss);
  // Log points by step, so identical runs log identical curves; between
  // them the rows are written by time: a kill loses at most flush_secs.
  const bool log_point = at_.update % s_.run.log_every == 0 || at_.update == c_.total_updates;
  if (log_point) {
    if (collective_)
      metrics_.log_point_with_rank_rows(epoch + 1);
    else
      metrics_.log_point(epoch + 1);
  } else if (seconds_between(last_row_write_, end) >= s_.flush_seconds) {
    metrics_.write_rows();
    last_row_write_ = Clock::now();
  }
  progress_.update({epoch + 1, c_.epochs, at_.update, c_.total_updates, metrics_.recent_loss(), timing.learning_rate},
                   timing.images);
  if (!hooks_.empty())
    hooks_.update_ended(StepView{at_.update, c_.total_updates, epoch + 1, timing.learning_rate, loss, timing.images,
                                 timing.total_s, timing.data_wait_s, log_point});
  const auto reason = collective_ ? checkpointer_.due_after_update(at_.update, agreed_time_checkpoint_)
                                  : checkpointer_.due_after_update(at_.update);
  if (reason && at_.update < c_.total_updates) save_checkpoint(*reason);
  stage2_.snapshot_after_update(at_.update, epoch + 1);
  last_step_end_ = at_.update == c_.total_updates ? end : Clock::now();
}

bool TrainingRun::local_stop() const {
  return stop_.requested() ||
         (stop_after_micro_batches_ > 0 && at_.micro_batches_run >= stop_after_micro_batches_);
}

// Alone: a signal (or the test's micro-batch count) stops at once. In a
// data-parallel job only what all ranks agreed on after the last update,
// so no rank is left waiting in a collective for one that stopped.
bool TrainingRun::stop_requested() const { return collective_ ? agreed_stop_ : local_stop(); }

RunStatus TrainingRun::finish_interrupted() {
  progress_.finish();
  const std::string why =
      (stop_.signal_number() ? "stopped by " + stop_signal_name(stop_.signal_number())
                             : std::string("stopped on request")) +
      " at step " + std::to_string(at_.update) +
      (at_.stopped_micro ? " (+" + std::to_string(at_.stopped_micro) + " micro-batches)" : "");
  store_.record_event(run_id_, "interrupted", why);
  if (s_.checkpoint.on_signal) save_checkpoint("signal");
  progress_.message("interrupted: " + why + "; run recorded as interrupted" +
                    (checkpointer_.newest().empty() ? "" : "; continue it with --resume"));
  hooks_.train_ended(TrainEnd{at_.update, TrainEndReason::interrupted}, at_.last_epoch);
  return RunStatus::interrupted;
}

}  // namespace orchestrate

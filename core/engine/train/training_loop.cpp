// The step loop: epochs of updates of micro-batches. Each concern is a part
// (training_run.h); this file only says in which order they act.
#include "engine/train/objective.h"
#include "engine/train/training_run.h"
#include "orchestrate/error.h"
#include "store/run_store.h"

namespace orchestrate {

RunStatus TrainingRun::run() {
  try {
    return train_epochs();
  } catch (const std::exception& e) {
    // A failed run still names each update it skipped since its last log
    // point; a device that cannot be read any more leaves them unnamed.
    try {
      update_step_.settle();
    } catch (const std::exception&) {
    }
    if (const std::string waited = sync_check_.named(exception_reason(e)); !waited.empty()) throw Error(waited);
    throw;
  }
}

RunStatus TrainingRun::train_epochs() {
  const std::int64_t U = c().updates_per_epoch;
  run_.hooks.train_begins(
      TrainBegin{*c().model, c().input, s().run.batch_size, at_.update, c().total_updates, U, run_.compute.device},
      at_.last_epoch);
  metrics_.clock().start();
  // Stopped after an epoch's last update but before its evaluation: do it now.
  if (at_.update > 0 && at_.update % U == 0 && at_.resume_micro == 0 && at_.evaluated_at_step != at_.update &&
      eval_due(at_.update / U))
    run_eval(at_.update / U);
  for (std::int64_t epoch = at_.update / U; epoch < c().epochs && at_.update < c().total_updates; ++epoch) {
    stage2_.start_if_due(epoch);
    train_epoch(epoch);
    if (at_.stopped || run_.hooks.stop_reason()) break;
    if (eval_due(epoch + 1)) run_eval(epoch + 1);
    if (run_.checkpointer.due_after_epoch(epoch + 1) && at_.update < c().total_updates) save_checkpoint("epoch");
    if (stage2_.snapshot_after_epoch(epoch + 1, at_.update)) metrics_.clock().set_aside();
  }
  // A stopped job's ranks stop together, so their rows can come to rank 0.
  strategy_->log_point(metrics_, at_.last_epoch, /*with_rank_rows=*/at_.stopped);
  device_busy_.record(run_.recorder, at_.update);  // the training steps' share, before the last evaluation
  if (at_.stopped) return finish_interrupted();
  // A hook's stop ends the run as its last update would: within the epoch
  // it reached, evaluated and saved.
  const bool hook_stopped = run_.hooks.stop_reason().has_value() && at_.update < c().total_updates;
  if (hook_stopped)
    console_.progress().message("stopped at step " + std::to_string(at_.update) + ": " + *run_.hooks.stop_reason());
  if (input_.evaluator && at_.evaluated_at_step != at_.update) run_eval(hook_stopped ? at_.last_epoch : c().epochs);
  // A run resumed at its last step trained nothing: its checkpoint is
  // already the end, and saving it again would only add a copy.
  const bool trained_nothing = at_.resumed_at_update == at_.update && at_.resume_micro == 0;
  if (trained_nothing)
    console_.say("run had already finished at step " + std::to_string(at_.update) + ": nothing to train");
  else if (s().checkpoint.at_end)
    save_checkpoint("end");
  console_.progress().finish();
  run_.hooks.train_ended(
      TrainEnd{at_.update, hook_stopped ? TrainEndReason::stopped_by_hook : TrainEndReason::finished},
      at_.last_epoch);
  return RunStatus::finished;
}

void TrainingRun::train_epoch(std::int64_t epoch) {
  c().model->train();
  at_.last_epoch = epoch + 1;
  const std::int64_t M = c().micro_batches_per_update;
  for (std::int64_t u = at_.update - epoch * c().updates_per_epoch;
       u < c().updates_per_epoch && at_.update < c().total_updates; ++u) {
    if (strategy_->stop_before_update()) {
      at_.stopped = true;
      return;
    }
    if (run_.hooks.stop_reason()) return;
    note_training_step(at_.update + 1);  // for a crash report (crash_handler.h)
    run_.hooks.update_begins(at_.update + 1);
    std::optional<SyncCheck::Scope> checking_for_waits(std::in_place, sync_check_, at_.update + 1);
    StepTiming timing;
    strategy_->share_buffers(*c().model);
    const std::int64_t first_micro = at_.resume_micro;
    at::Tensor loss_sum = at_.partial_loss;
    at_.resume_micro = 0;
    at_.partial_loss = at::Tensor();
    for (std::int64_t m = first_micro; m < M; ++m) {
      // A stop between micro-batches keeps the gradients accumulated so
      // far: the checkpoint holds them, and --resume goes on from here.
      if (m > first_micro && strategy_->stop_between_micro_batches()) {
        at_.stopped = true;
        at_.stopped_micro = m;
        at_.partial_loss = loss_sum;
        return;
      }
      const auto t0 = Clock::now();
      auto batch = input_.train_feeder->next();  // on the device
      timing.data_wait_s += seconds_between(t0, Clock::now());
      if (!batch) throw Error("the data pipeline ended early at update " + std::to_string(at_.update) + " (a bug)");
      const auto loss = micro_batch(*batch, timing, m == M - 1);
      loss_sum = loss_sum.defined() ? loss_sum + loss : loss;
      ++at_.micro_batches_run;
    }
    strategy_->gradients().after_backward(timing, metrics_.timer());
    const auto local_loss = M > 1 ? loss_sum / static_cast<double>(M) : loss_sum;
    const auto loss = strategy_->agree_on_update(local_loss, run_.checkpointer);
    const double epochs_done = static_cast<double>(at_.update) / static_cast<double>(c().updates_per_epoch);
    strategy_->gradients().exchange_compressed(c().compressor && update_step_.skips_for_loss(loss),
                                               CompressionStep{at_.update, epochs_done, update_step_.metrics()},
                                               timing, metrics_.timer());
    const double lr = [&] {
      const PluginCallScope in_schedule(c().sites.schedule, "learning_rate");
      return c().schedule->learning_rate(at_.update);
    }();
    update_step_.apply(loss, lr, at_.update, epoch, precision_, stage2_,
                       [this](const at::Tensor& images, const at::Tensor& labels) { return batch_loss(images, labels); });
    metrics_.timer().optimizer_ends();
    checking_for_waits.reset();  // the update's end reads the device on purpose
    timing.learning_rate = lr;
    after_update(timing, loss, local_loss, epoch, Clock::now());
  }
}

// One micro-batch: forward, loss, backward, replayed from a CUDA graph
// when the run allows it (cuda_graph_step.h). Returns the loss, on the
// device. Only the update's last micro-batch all-reduces its gradients (`last`).
at::Tensor TrainingRun::micro_batch(const Batch& batch, StepTiming& timing, bool last) {
  auto t0 = Clock::now();
  auto images = batch.images;  // finished by the feeder (batch_feeder.h)
  if (run_.compute.channels_last) images = images.contiguous(at::MemoryFormat::ChannelsLast);
  const auto& labels = batch.labels;
  timing.data_wait_s += seconds_between(t0, Clock::now());
  stage2_.remember_batch(images, labels);
  metrics_.timer().compute_begins();
  strategy_->gradients().before_backward(last);
  const auto result = graph_step_.run(
      images, labels, at_.update + 1,
      [this](const at::Tensor& x, const at::Tensor& y, std::string& not_capturable) {
        return forward_backward(x, y, not_capturable);
      });
  metrics_.window().count_hits(result.logits, labels);
  metrics_.timer().compute_ends();
  timing.images += strategy_->images_in_row(labels.size(0));
  return result.loss;
}

// Loss in fp32 whatever the autocast dtype; divided so that accumulated
// micro-batch gradients are the mean over the whole update's batch.
// train/loss is the main classifier's; auxiliary losses are logged apart,
// which a CUDA graph cannot replay (`not_capturable`).
CudaGraphStep::Result TrainingRun::forward_backward(const at::Tensor& images, const at::Tensor& labels,
                                                    std::string& not_capturable) {
  std::optional<PluginCallScope> in_model(std::in_place, c().sites.model, "forward");
  const ModelOutput output = precision_.forward(*c().model, images);
  check_logits_shape(output.logits, images.size(0), c().input.num_classes, s().model_plugin);
  const auto loss = cross_entropy(output.logits, labels, s().label_smoothing);
  auto objective = loss;
  if (!output.aux_logits.empty()) {
    not_capturable = "the model's auxiliary classifiers log their losses at every step";
    if (const auto aux = weighted_aux_loss(
            output.aux_logits, labels, c().aux_weights, s().label_smoothing, s().model_plugin,
            [this](const std::string& name, const at::Tensor& value) { metrics_.window().add_scalar(name, value); });
        aux.defined())
      objective = loss + aux;
  }
  in_model.emplace(c().sites.model, "backward");
  precision_.scale(objective / static_cast<double>(c().micro_batches_per_update)).backward();
  return {loss.detach(), output.logits.detach()};
}

// The update's end: its row, the log point or the rows' write, progress,
// hooks, and the checkpoint and snapshot the step or the clock asks for.
void TrainingRun::after_update(const StepTiming& done, const at::Tensor& loss, const at::Tensor& local_loss,
                               std::int64_t epoch, Clock::time_point end) {
  ++at_.update;
  device_busy_.step_done();
  // Every second between two updates' ends belongs to one of them: what is
  // not data, compute or optimizer (logging, the store) shows as the rest
  // of total_s, so the report's images/s agrees with the clock.
  StepTiming timing = done;
  timing.step = at_.update;
  timing.epoch = epoch + 1;
  timing.total_s = metrics_.clock().step_seconds(end);
  metrics_.window().add_update(timing, strategy_->loss_in_row(loss, local_loss));
  // Log points by step, so identical runs log identical curves; between
  // them the rows are written by time: a kill loses at most flush_secs.
  const bool log_point = at_.update % s().run.log_every == 0 || at_.update == c().total_updates;
  if (log_point) {
    strategy_->log_point(metrics_, epoch + 1, /*with_rank_rows=*/true);  // reads the skip checks too
  } else if (metrics_.clock().rows_due(end)) {
    metrics_.write_rows();
    metrics_.clock().rows_written();
  }
  // Skip checks left on the device are read outside the step, at most
  // kMaxUnreadSkipChecks updates late (update_step.h).
  if (update_step_.unread_checks_full()) update_step_.settle();
  console_.progress().update(
      {epoch + 1, c().epochs, at_.update, c().total_updates, metrics_.recent_loss(), timing.learning_rate},
      timing.images);
  if (!run_.hooks.empty())
    run_.hooks.update_ended(StepView{at_.update, c().total_updates, epoch + 1, timing.learning_rate, loss,
                                     timing.images, timing.total_s, timing.data_wait_s, log_point});
  const auto reason = run_.checkpointer.due_after_update(at_.update, strategy_->save_by_time(run_.checkpointer));
  if (reason && at_.update < c().total_updates) save_checkpoint(*reason);
  stage2_.snapshot_after_update(at_.update, epoch + 1);
  if (at_.update == c().total_updates)
    metrics_.clock().step_ended(end);
  else
    metrics_.clock().set_aside();
}

bool TrainingRun::local_stop() const {
  return run_.stop.requested() ||
         (run_.options.stop_after_micro_batches > 0 && at_.micro_batches_run >= run_.options.stop_after_micro_batches);
}

RunStatus TrainingRun::finish_interrupted() {
  console_.progress().finish();
  const std::string why =
      (run_.stop.signal_number() ? "stopped by " + stop_signal_name(run_.stop.signal_number())
                             : std::string("stopped on request")) +
      " at step " + std::to_string(at_.update) +
      (at_.stopped_micro ? " (+" + std::to_string(at_.stopped_micro) + " micro-batches)" : "");
  run_.recorder.event("interrupted", why);
  if (s().checkpoint.on_signal) save_checkpoint("signal");
  console_.progress().message("interrupted: " + why + "; run recorded as interrupted" +
                    (run_.checkpointer.newest().empty() ? "" : "; continue it with --resume"));
  run_.hooks.train_ended(TrainEnd{at_.update, TrainEndReason::interrupted}, at_.last_epoch);
  return RunStatus::interrupted;
}

}  // namespace orchestrate

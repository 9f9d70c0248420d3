// The checkpoint policy's half that needs the whole run: what a checkpoint
// holds (every part's state) and how a resume gives it back to the parts.
#include <filesystem>

#include "orchestrate/error.h"
#include "safetensors.h"
#include "store_sql.h"
#include "train/training_run.h"

namespace orchestrate {

// Everything a resumed run needs to take the same steps as this one.
void TrainingRun::save_checkpoint(const std::string& reason) {
  // Every rank comes here together; the gather comes before any test only
  // rank 0 can answer, so no rank is left waiting in it.
  sync_.gather_state();
  if (checkpointer_.saved_at(at_.update, at_.stopped_micro)) return;
  // The store then shows every step up to the checkpoint. A checkpoint the
  // clock chose ("time") makes no log point, so the logged curve stays the
  // steps'.
  if (reason == "time")
    metrics_.write_rows();
  else
    metrics_.log_point(at_.last_epoch);
  if (!leader_) return;  // rank 0 writes the job's checkpoints
  CheckpointContent content;
  CheckpointMeta& meta = content.meta;
  meta.orchestrate_version = version();
  meta.run_id = run_id_;
  meta.step = at_.update;
  meta.micro_batch = at_.stopped_micro;
  meta.epoch = at_.last_epoch;
  meta.evaluated_at_step = at_.evaluated_at_step;
  meta.reason = reason;
  meta.created_at = utc_now_iso();
  meta.run_name = s_.run.name;
  meta.model = s_.model_plugin;
  meta.input_shape = {c_.input.channels, c_.input.height, c_.input.width};
  meta.num_classes = c_.input.num_classes;
  meta.class_names = c_.train_set->info().class_names;
  meta.world_size = collective_ ? collective_->world_size() : 1;
  meta.metrics = metrics_.latest();
  for (const auto& [key, value] : recipe_.flattened()) meta.recipe_params[key] = value;
  content.weights = model_state(*c_.model);
  stage2_.capture_state();
  content.trainer_state = save_trainer_state(state_refs(), at_.stopped_micro > 0);
  content.recipe_toml = recipe_.resolved_toml();
  const std::string path = checkpointer_.save(std::move(content));
  if (!path.empty()) progress_.message("saved checkpoint " + path + " (" + reason + ")");
  last_step_end_ = Clock::now();  // saving is not the next step's time
}

TrainerStateRefs TrainingRun::state_refs() {
  return TrainerStateRefs{*c_.optimizer,          c_.wrappers,           precision_.scaler(),
                          update_step_.parameters(), at_.partial_loss,    update_step_.skipped(),
                          eval_seconds_,          sync_.state_by_rank(), stage2_.state(),
                          hooks_.stateful_parts()};
}

void TrainingRun::restore(const CheckpointMeta& meta, const std::string& path) {
  namespace fs = std::filesystem;
  // The pipeline skips step x M + micro_batch micro-batches: a position
  // inside an update that has fewer is a damaged description.
  if (meta.micro_batch >= c_.micro_batches_per_update)
    throw Error("checkpoint " + path + " is " + std::to_string(meta.micro_batch) +
                " micro-batches into an update of " + std::to_string(c_.micro_batches_per_update) +
                "; its checkpoint.json is damaged: use an older checkpoint of the run");
  load_model_state(*c_.model, read_safetensors((fs::path(path) / kWeightsFile).string()), path);
  stage2_.capture_state();  // the names to read
  load_trainer_state((fs::path(path) / kTrainerStateFile).string(), state_refs(), meta.micro_batch > 0);
  stage2_.load_state(path);
  sync_.restore_state(device_);
  if (at_.partial_loss.defined()) at_.partial_loss = at_.partial_loss.to(device_);
  at_.update = meta.step;
  at_.resume_micro = meta.micro_batch;
  at_.evaluated_at_step = meta.evaluated_at_step;
  at_.last_epoch = meta.epoch;
  metrics_.latest() = meta.metrics;
  resumed_at_update_ = meta.step;
  // The first line of a resumed run says what it continues, before any step.
  std::string line = "resuming run " + std::to_string(meta.run_id);
  if (meta.run_id != run_id_) line += " as run " + std::to_string(run_id_);
  line += " from step " + std::to_string(meta.step) + " of " + std::to_string(c_.total_updates);
  if (meta.micro_batch > 0) line += " (micro-batch " + std::to_string(meta.micro_batch) + ")";
  say(line + " (checkpoint " + path + ")");
}

}  // namespace orchestrate

// The checkpoint policy's half that needs the whole run: what a checkpoint
// holds (every part's state) and how a resume gives it back to the parts.
#include <filesystem>

#include "checkpoint/model_state.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/state_adapters.h"
#include "engine/train/training_run.h"
#include "orchestrate/error.h"
#include "store/utc_now.h"

namespace orchestrate {

// Everything a resumed run needs to take the same steps as this one.
void TrainingRun::save_checkpoint(const std::string& reason) {
  const DeviceBusy::Pause saving(device_busy_);
  // Every rank comes here together; the gather comes before any test only
  // rank 0 can answer, so no rank is left waiting in it.
  strategy_->gradients().gather_state();
  if (run_.checkpointer.saved_at(at_.update, at_.stopped_micro)) return;
  // The store then shows every step up to the checkpoint. A checkpoint the
  // clock chose ("time") makes no log point, so the logged curve stays the
  // steps'.
  if (reason == "time")
    metrics_.write_rows();
  else
    metrics_.log_point(at_.last_epoch);
  if (!strategy_->leader()) return;  // rank 0 writes the job's checkpoints
  CheckpointContent content;
  CheckpointMeta& meta = content.meta;
  meta.orchestrate_version = version();
  meta.run_id = run_.recorder.run_id();
  meta.step = at_.update;
  meta.micro_batch = at_.stopped_micro;
  meta.epoch = at_.last_epoch;
  meta.evaluated_at_step = at_.evaluated_at_step;
  meta.reason = reason;
  meta.created_at = utc_now_iso();
  meta.run_name = s().run.name;
  meta.model = s().model_plugin;
  meta.input_shape = {c().input.channels, c().input.height, c().input.width};
  meta.num_classes = c().input.num_classes;
  meta.class_names = c().train_set->info().class_names;
  meta.world_size = strategy_->world_size();
  meta.updates_per_epoch = c().updates_per_epoch;
  meta.metrics = metrics_.latest();
  for (const auto& [key, value] : run_.recipe.flattened()) meta.recipe_params[key] = value;
  content.weights = model_state(*c().model);
  content.trainer_state = state_.save();
  content.recipe_toml = run_.recipe.resolved_toml();
  const std::string path = run_.checkpointer.save(std::move(content));
  if (!path.empty()) console_.progress().message("saved checkpoint " + path + " (" + reason + ")");
  metrics_.clock().set_aside();  // saving is not the next step's time
}

// Each part that keeps state, once. What a resume cannot do without is
// refused when the checkpoint lacks it; a plugin's state is given back
// when the checkpoint has it (one saved before it kept any has none).
void TrainingRun::register_state() {
  using IfAbsent = TrainerState::IfAbsent;
  state_.add_owned("optimizer", std::make_unique<OptimizerState>(*c().optimizer), IfAbsent::refuse);
  for (std::size_t i = 0; i < c().wrappers.size(); ++i) state_.add("wrappers." + std::to_string(i), *c().wrappers[i]);
  state_.add("loss_scaler", precision_.scaler(), IfAbsent::refuse);
  state_.add_owned("random_generators", std::make_unique<RandomGenerators>(), IfAbsent::refuse);
  state_.add_owned("partial_update", std::make_unique<PartialUpdate>(update_step_.parameters(), at_.partial_loss,
                                                                     at_.stopped_micro, run_.compute.device));
  state_.add("update_step", update_step_);
  state_.add("gradient_sync", strategy_->gradients());
  // Stage 2 already running at the resumed step needs its state.
  state_.add("dim_reduce", stage2_, stage2_.active() ? IfAbsent::refuse : IfAbsent::skip);
  state_.add("metrics", metrics_);
  for (const auto& [name, part] : run_.hooks.stateful_parts()) state_.add(name, *part);
}

void TrainingRun::restore(const CheckpointMeta& meta, const std::string& path) {
  namespace fs = std::filesystem;
  // The pipeline skips step x M + micro_batch micro-batches: a position
  // inside an update that has fewer is a damaged description.
  if (meta.micro_batch >= c().micro_batches_per_update)
    throw Error("checkpoint " + path + " is " + std::to_string(meta.micro_batch) +
                " micro-batches into an update of " + std::to_string(c().micro_batches_per_update) +
                "; its checkpoint.json is damaged: use an older checkpoint of the run");
  load_model_state(*c().model, read_safetensors((fs::path(path) / kWeightsFile).string()), path);
  state_.load((fs::path(path) / kTrainerStateFile).string());
  at_.update = meta.step;
  at_.resume_micro = meta.micro_batch;
  at_.evaluated_at_step = meta.evaluated_at_step;
  at_.last_epoch = meta.epoch;
  metrics_.latest() = meta.metrics;
  at_.resumed_at_update = meta.step;
  // The first line of a resumed run says what it continues, before any step.
  std::string line = "resuming run " + std::to_string(meta.run_id);
  if (meta.run_id != run_.recorder.run_id()) line += " as run " + std::to_string(run_.recorder.run_id());
  line += " from step " + std::to_string(meta.step) + " of " + std::to_string(c().total_updates);
  if (meta.micro_batch > 0) line += " (micro-batch " + std::to_string(meta.micro_batch) + ")";
  console_.say(line + " (checkpoint " + path + ")");
}

}  // namespace orchestrate

#include "engine/evaluation/eval_target.h"
#include "store/run_store.h"

#include <filesystem>

#include "checkpoint/checkpoint.h"
#include "checkpoint/resume.h"
#include "engine/setup/weight_transfer.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace fs = std::filesystem;

namespace {

// Whether `store` holds run `run_id` with `checkpoint` among its recorded checkpoints.
bool store_records(const RunStore* store, std::int64_t run_id, const std::string& checkpoint) {
  if (!store) return false;
  const auto run = store->find_run(std::to_string(run_id));
  if (!run || run->id != run_id) return false;  // find_run falls back to a run *named* "7"
  for (const auto& record : store->checkpoints(run_id)) {
    std::error_code error;
    if (fs::equivalent(record.path, checkpoint, error)) return true;
  }
  return false;
}

EvalTarget of_checkpoint(const std::string& argument, const std::string& checkpoint, const RunStore* store) {
  const CheckpointMeta meta = read_checkpoint_meta(checkpoint);  // refuses incomplete and damaged ones
  EvalTarget target;
  target.argument = argument;
  target.checkpoint = checkpoint;
  target.weights_file = (fs::path(checkpoint) / kWeightsFile).string();
  target.step = meta.step;
  target.epoch = meta.epoch;
  target.model = meta.model;
  const std::string position = " at step " + std::to_string(meta.step) + " (epoch " + std::to_string(meta.epoch) + ")";
  if (store_records(store, meta.run_id, checkpoint)) {
    target.source_run_id = meta.run_id;
    target.provenance = "checkpoint " + checkpoint + " of run " + std::to_string(meta.run_id) + position;
  } else {
    const std::string as_its = " as run " + std::to_string(meta.run_id) + "'s";
    target.provenance = "checkpoint " + checkpoint + position + ", not linked to a run: " +
                        (store ? store->path() + " does not record it" : std::string("no run store records it")) +
                        as_its;
  }
  return target;
}

}  // namespace

EvalTarget resolve_eval_target(const std::string& path, const RunStore* store) {
  std::error_code error;
  if (fs::is_directory(path, error)) {
    if (!is_checkpoint(path))
      throw UsageError("--checkpoint " + path + ": not a checkpoint directory (no " + kMetaFile +
                       "); `orchestrate checkpoints RUN` lists a run's checkpoints");
    return of_checkpoint(path, path, store);
  }
  if (fs::exists(path, error)) {
    EvalTarget target;
    target.argument = path;
    target.weights_file = weights_file_of(path, "--checkpoint");  // refuses anything but .safetensors
    target.provenance = "weights file " + path + " (no training run)";
    return target;
  }
  const std::string nothing_there = "--checkpoint " + path + ": no such checkpoint directory or .safetensors file";
  if (!store) throw UsageError(nothing_there + ", and no run store to look up a run in (--db names one)");
  const auto run = store->find_run(path);
  if (!run)
    throw UsageError(nothing_there + ", and no run with that id or name in " + store->path() +
                     "; `orchestrate runs` lists the runs, `orchestrate checkpoints RUN` their checkpoints");
  const std::string newest = newest_checkpoint_of(*store, run->id);
  if (newest.empty())
    throw UsageError("--checkpoint " + path + ": run " + std::to_string(run->id) +
                     " has no checkpoint on disk to evaluate ([checkpoint] at_end saves one when a run ends)");
  return of_checkpoint(path, newest, store);
}

}  // namespace orchestrate

// Trains one recipe in this process and records it in the run store.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "engine/recipe/recipe.h"
#include "engine/train/sync_check.h"
#include "orchestrate/registry.h"
#include "store/run_records.h"

namespace orchestrate {

class RunStore;

class Collective;

struct TrainOutcome {
  std::int64_t run_id = 0;
  RunStatus status = RunStatus::running;
  std::int64_t steps = 0;
  double wall_s = 0;
  std::map<std::string, double> final_metrics;  // "eval/top1", ...
  std::string checkpoint;  // the newest checkpoint written, "" if none
  std::string exported;    // the serving version [export] wrote, "" if none
  bool resumed = false;
};

struct TrainOptions {
  std::ostream* progress = nullptr;  // where the progress line goes; nullptr: nowhere
  bool progress_is_terminal = false;
  // A checkpoint directory to continue (resolve_resume_target): the run it
  // belongs to continues under its own id.
  std::string resume_from;
  // For tests: behave as if SIGINT arrived after this many micro-batches of
  // this process (0: never), to stop at an exact position.
  std::int64_t stop_after_micro_batches = 0;
  // The data-parallel job this process is a rank of (nullptr: it trains
  // alone). Rank 0 records the run in `store` and writes the checkpoints and
  // the export; the other ranks take the same steps on their own shard of
  // every batch and record only into the (scratch) store they are given.
  Collective* collective = nullptr;
  // Where hooks write files (profiles): <artifact_root>/run-<id>, with rank
  // 0's run id on every rank. "": "artifacts" beside the run store.
  std::string artifact_root;
  // What loading the plugins warned about (a file refused, a file hidden by
  // another of the same plugin name): recorded as the run's "plugins" events,
  // so the run says which files it did not use.
  std::vector<std::string> plugin_warnings;
  // The job's run store (rank 0's), beside which a crashing rank leaves its
  // breadcrumb (crash_handler.h); "": the store train() is given.
  std::string job_store_path;
  // run --sync-debug: ATen's host-device synchronisation check over each
  // steady training step (sync_check.h).
  SyncDebug sync_debug = SyncDebug::off;
};

// Builds the recipe's components, trains, evaluates, and records everything
// under a new run in `store` (or the resumed one). A SIGINT/SIGTERM finishes
// the current micro-batch, saves a checkpoint and returns status interrupted;
// any error marks the run failed and is rethrown. A refused resume (a changed
// recipe, a damaged checkpoint) and an unwritable checkpoint directory throw
// before any run row is written or changed.
TrainOutcome train(const Recipe& recipe, const Registry& registry, RunStore& store, const TrainOptions& options);

}  // namespace orchestrate

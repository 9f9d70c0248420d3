// Trains one recipe in this process and records it in the run store.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>

#include "orchestrate/registry.h"
#include "recipe.h"
#include "run_store.h"

namespace orchestrate {

struct TrainOutcome {
  std::int64_t run_id = 0;
  RunStatus status = RunStatus::running;
  std::int64_t steps = 0;
  double wall_s = 0;
  std::map<std::string, double> final_metrics;  // "eval/top1", ...
};

struct TrainOptions {
  std::ostream* progress = nullptr;  // where the progress line goes; nullptr: nowhere
  bool progress_is_terminal = false;
};

// Builds the recipe's components, trains, evaluates, and records everything
// under a new run in `store`. A SIGINT/SIGTERM finishes the current step and
// returns status interrupted; any error marks the run failed and is rethrown.
TrainOutcome train(const Recipe& recipe, const Registry& registry, RunStore& store, const TrainOptions& options);

}  // namespace orchestrate

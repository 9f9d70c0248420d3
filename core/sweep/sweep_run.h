// A sweep from its spec to its ranked trials: every trial's recipe checked
// as `orchestrate run` checks it, before any starts; then the trials run on
// this machine's slots (local_executor.h), each an `orchestrate run` of the
// base recipe with the trial's --set overrides, recorded in the run store as
// a run tagged sweep=<name> and trial=<n>, and ranked by the spec's metric.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/table_format.h"
#include "orchestrate/registry.h"
#include "sweep/local_executor.h"
#include "sweep/sweep_spec.h"

namespace orchestrate::sweep {

// What the sweep needs beyond its spec.
struct SweepSetup {
  std::string recipe_path;                // the base recipe, resolved
  std::string engine;                     // the orchestrate-engine that runs each trial
  std::string db;                         // the run store every trial records in
  std::vector<std::string> run_arguments; // passed to each `run` too (--plugin-path ...)
  std::string output_dir;                 // each trial's outcome and log
};

// The metrics a run of `recipe_path` (with `overrides`) records at its end,
// by which a sweep can rank it: train/loss and train/top1, and eval/top1,
// eval/top5 and eval/loss when it evaluates.
std::vector<std::string> rankable_metrics(bool evaluates);

// Checks every trial's recipe and the metric, all problems at once (one
// RecipeError, each line naming the trial and its overrides, or the
// metric's place in the spec).
void check_trials(const SweepSpec& spec, const std::vector<Trial>& trials, const std::string& recipe_path,
                  const Registry& registry);

struct TrialOutcome {
  Trial trial;
  std::string status = "pending";  // finished, interrupted, failed, pending
  std::int64_t run_id = 0;
  std::optional<double> value;     // the metric at the trial's end
  std::string reason;              // why a trial failed: its error's line
  double seconds = 0;
};

// Runs them, with a progress line on stderr (trials done, running and failed,
// the best so far, the ETA); returns them in trial order.
std::vector<TrialOutcome> run_trials(const SweepSpec& spec, const std::vector<Trial>& trials, const SweepSetup& setup,
                                     const std::vector<Slot>& slots);

// The trials best first (failed and unmeasured ones last): rank, trial, run,
// status, value (of the spec's metric), seconds, each parameter's value
// (in JSON, one "parameters" object) and a failed trial's reason.
Table ranking_table(const SweepSpec& spec, std::vector<TrialOutcome> outcomes);

}  // namespace orchestrate::sweep

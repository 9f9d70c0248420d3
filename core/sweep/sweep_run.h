// A sweep's trials checked before any starts: every trial's recipe as
// `orchestrate run` checks it, and the metric as one every trial records.
// (sweep_controller.h runs them; sweep_ranking.h ranks them.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "orchestrate/registry.h"
#include "sweep/sweep_spec.h"

namespace orchestrate::sweep {

// The metrics a run of `recipe_path` (with `overrides`) records at its end,
// by which a sweep can rank it: train/loss and train/top1, and eval/top1,
// eval/top5 and eval/loss when it evaluates.
std::vector<std::string> rankable_metrics(bool evaluates);

// Checks every trial's recipe and the metric, all problems at once (one
// RecipeError, each line naming the trial and its overrides, or the
// metric's place in the spec).
void check_trials(const SweepSpec& spec, const std::vector<Trial>& trials, const std::string& recipe_path,
                  const Registry& registry);

}  // namespace orchestrate::sweep

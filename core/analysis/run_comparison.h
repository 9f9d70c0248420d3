// `orchestrate compare A B [C...]`: runs side by side, one column a run, with
// only what tells them apart: the resolved-recipe keys that differ beside the
// final and best metrics, throughput and wall time, then the plugin builds
// and the environment (LibTorch, host, device) where they differ.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analysis/reports.h"
#include "analysis/table_format.h"
#include "engine/recipe/core_defaults.h"
#include "store/run_store.h"

namespace orchestrate {

struct ComparedRun {
  RunDetails details;
  ThroughputRow throughput;
};

// Columns: what (recipe, final, best, throughput, plugin, environment), key,
// then one per run, headed by its name (name#id where names repeat). Rows, in
// that order of `what`:
//   recipe       each dotted recipe key whose value differs (missing: null);
//   final, best  each metric whose value differs, every one with
//                `every_metric` (best: the lowest of a loss or error, the
//                highest of the rest; not for time/ metrics);
//   throughput   median images/s over the steady state, steps, wall_s;
//   plugin       each plugin whose version or SHA-256 differs ("1.0.0 3f2a9c0d1e2b");
//   environment  orchestrate, LibTorch, host, device, world size, git revision where they differ.
// Needs two runs or more.
Table comparison_table(const std::vector<ComparedRun>& runs, bool every_metric = false);

// The dotted resolved-recipe keys whose values differ between `runs`, in key
// order, each with one cell per run (null where a run lacks the key): the
// recipe rows of comparison_table, and what `plot` names runs by.
// A core key one run did not record counts at its spec's default (`defaults`).
std::vector<std::pair<std::string, std::vector<Cell>>> recipe_differences(
    const std::vector<RunDetails>& runs, const CoreDefaults& defaults = CoreDefaults::builtin());

// Whether a smaller value of `metric` is the better one (losses, errors).
bool lower_is_better(const std::string& metric);

}  // namespace orchestrate

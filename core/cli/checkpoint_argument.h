// What a RUN|CHECKPOINT command-line argument names, for the commands that
// read a run's weights (weights, export, eval).
#pragma once

#include <string>

#include "options.h"
#include "run_store.h"

namespace orchestrate::cli {

// The run `id` (an id or a name) in `store`; a UsageError pointing at
// `orchestrate runs` when there is none.
RunSummary find_run_or_throw(const RunStore& store, const std::string& id);

// A checkpoint directory or weights file as given, else the newest
// checkpoint on disk of the run it names in the --db store.
std::string checkpoint_of(const std::string& source, const po::variables_map& values);

}  // namespace orchestrate::cli

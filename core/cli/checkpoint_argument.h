// What a RUN|CHECKPOINT command-line argument names, for the commands that
// read a run's weights (weights, export, eval).
#pragma once

#include <string>

#include "cli/options.h"
#include "store/run_store.h"

namespace orchestrate::cli {

// A checkpoint directory or weights file as given, else the newest
// checkpoint on disk of the run it names in the --db store.
std::string checkpoint_of(const std::string& source, const po::variables_map& values);

}  // namespace orchestrate::cli

// Runs the orchestrate executable the way a user does, for end-to-end tests.
#pragma once

#include <string>

#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` through /bin/sh.
CommandResult run_shell(const std::string& command);

// Runs `orchestrate <arguments>` with only the built plugins on its path
// (ORCHESTRATE_PLUGIN_PATH and ORCHESTRATE_DB cleared).
CommandResult run_orchestrate(const std::string& arguments);

}  // namespace orchestrate::testing

// --plugin-path and loading the plugins: the engine's commands only (the
// front end never loads a plugin, so it needs no LibTorch).
#pragma once

#include <string>
#include <vector>

#include "cli/options.h"
#include "orchestrate/registry.h"

namespace orchestrate::cli {

// --plugin-path: added to the commands that load plugins.
void add_plugin_path_option(po::options_description& options);

// Loads the plugins from --plugin-path, $ORCHESTRATE_PLUGIN_PATH and the
// default directory into `registry`. A refused plugin file, and a file hidden
// by an earlier one of the same plugin name, is a one-line warning on stderr;
// the same lines are returned, for a run to record among its events.
std::vector<std::string> load_all_plugins(Registry& registry, const po::variables_map& values);

}  // namespace orchestrate::cli

#include "plugin_options.h"

#include <iostream>

#include "plugin_host.h"

namespace orchestrate::cli {

void add_plugin_path_option(po::options_description& options) {
  options.add_options()("plugin-path", po::value<std::string>()->default_value(""),
                        "':'-separated plugin directories, searched before $ORCHESTRATE_PLUGIN_PATH and the "
                        "default beside the executable");
}

void load_all_plugins(Registry& registry, const po::variables_map& values) {
  // A refused file stops only a command that needs what was in it (the
  // "unknown component" error then names it); any other command goes on.
  const PluginScan scan = scan_plugins(registry, plugin_search_path(values["plugin-path"].as<std::string>()));
  for (const auto& refused : scan.refused) std::cerr << "orchestrate: warning: plugin skipped: " << refused.message << "\n";
  for (const auto& shadowed : scan.shadowed) std::cerr << "orchestrate: warning: " << shadowed.message() << "\n";
}

}  // namespace orchestrate::cli

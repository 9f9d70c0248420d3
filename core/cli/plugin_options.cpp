#include "cli/plugin_options.h"

#include <iostream>

#include "engine/setup/plugin_host.h"

namespace orchestrate::cli {

void add_plugin_path_option(po::options_description& options) {
  options.add_options()("plugin-path", po::value<std::string>()->default_value(""),
                        "':'-separated plugin directories, searched before $ORCHESTRATE_PLUGIN_PATH and the "
                        "default beside the executable");
}

std::vector<std::string> load_all_plugins(Registry& registry, const po::variables_map& values) {
  // A refused file stops only a command that needs what was in it (the
  // "unknown component" error then names it); any other command goes on.
  const PluginScan scan = scan_plugins(registry, plugin_search_path(values["plugin-path"].as<std::string>()));
  std::vector<std::string> warnings;
  for (const auto& refused : scan.refused) warnings.push_back("plugin skipped: " + refused.message);
  for (const auto& shadowed : scan.shadowed) warnings.push_back(shadowed.message());
  for (const auto& warning : warnings) std::cerr << "orchestrate: warning: " << warning << "\n";
  return warnings;
}

}  // namespace orchestrate::cli

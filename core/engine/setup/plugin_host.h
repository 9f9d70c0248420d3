// Finds plugin libraries, checks their descriptor, and lets them register.
#pragma once

#include <string>
#include <vector>

#include "orchestrate/registry.h"

namespace orchestrate {

// Directories to scan, in order: those given on the command line
// (--plugin-path, ':'-separated), then $ORCHESTRATE_PLUGIN_PATH, then the
// default beside the engine executable (<prefix>/lib/orchestrate/plugins for
// <prefix>/libexec/orchestrate/orchestrate-engine).
std::vector<std::string> plugin_search_path(const std::string& command_line_path);

// The default plugin directory beside the running engine executable.
std::string default_plugin_dir();

// Loads one plugin library into `registry`. Throws PluginError when the file
// is refused: it fails the ELF check that runs before dlopen (a damaged or
// truncated file would crash the loader), cannot be loaded (with the
// loader's reason), exports no descriptor, has another plugin API version
// (both versions named), another LibTorch version or C++ ABI. Also throws
// when its registration fails, or registers a component name already taken
// (both plugins and both files named).
void load_plugin_library(Registry& registry, const std::string& path);

// Loads every liborchestrate_*.so in `directories` (sorted by name, a missing
// directory is skipped). A name already loaded from an earlier directory is
// skipped, so an earlier directory overrides a later one. A file refused
// before it registers anything (by the ELF check, the loader or its
// descriptor) is skipped and returned, so that one broken plugin does not
// stop a command that does not need it; the list is also kept for the
// "unknown component" error (Registry::set_refused). A plugin that fails while
// registering stops the load: the registry would hold part of it.
std::vector<RefusedPlugin> load_plugins(Registry& registry, const std::vector<std::string>& directories);

// A plugin file of a later directory that an earlier one's file of the same
// plugin name hides (a user's copy of a built-in, say): not loaded, but said.
struct ShadowedPlugin {
  std::string used;    // the file loaded (or refused) in its place
  std::string hidden;  // the file not loaded
  std::string message() const;  // one line naming both
};

// What load_plugins returns, and the files it did not load because of a name.
struct PluginScan {
  std::vector<RefusedPlugin> refused;
  std::vector<ShadowedPlugin> shadowed;
};
PluginScan scan_plugins(Registry& registry, const std::vector<std::string>& directories);

}  // namespace orchestrate

// The plugin files the host refused to load in this process, and why.
//
// A component that cannot be found may have been in one of them, so the
// "unknown component" error names them. They are kept here, process-wide,
// because that error is raised by inline lookups (ComponentRegistry::get)
// that see one kind's registry, not the Registry the host filled; a process
// scans its plugin path once, and each scan replaces the list.
#pragma once

#include <string>
#include <vector>

#include "orchestrate/api.h"

namespace orchestrate {

struct RefusedPlugin {
  std::string path;
  std::string message;  // one line: the path, what is wrong, how to fix it
};

ORCHESTRATE_API void set_refused_plugins(std::vector<RefusedPlugin> refused);
ORCHESTRATE_API std::vector<RefusedPlugin> refused_plugins();

}  // namespace orchestrate

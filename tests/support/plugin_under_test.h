// The plugin a <name>_plugin_test links statically (see orchestrate_add_plugin),
// registered once into a registry that lives for the whole test program.
#pragma once

#include "orchestrate/plugin.h"

namespace orchestrate::testing {

inline Registry& plugin_under_test() {
  static Registry registry;
  static const bool registered = (orchestrate_plugin_descriptor()->register_components(registry), true);
  (void)registered;
  return registry;
}

}  // namespace orchestrate::testing

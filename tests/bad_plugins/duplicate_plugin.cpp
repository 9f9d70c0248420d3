// Registers "mock", which the built-in mock plugin already registers.
#include "orchestrate/plugin.h"

namespace {
void register_components(orchestrate::Registry& registry) {
  registry.datasets().add("mock", "a clash", {}, nullptr);
}
}  // namespace

ORCHESTRATE_PLUGIN("duplicate", "1.0.0", register_components)

// Registers a hook whose every_n defaults to 0 but must be at least 1: the
// host must refuse the plugin at load (a hook using the default divided by
// zero, exit 136, while the same value set by hand was refused).
#include "orchestrate/plugin.h"

namespace {
void register_components(orchestrate::Registry& registry) {
  registry.hooks().add("tick", "a hook with a default outside its range",
                       {orchestrate::int_param("every_n", 0, "updates between ticks").at_least(1)}, nullptr);
}
}  // namespace

ORCHESTRATE_PLUGIN("bad_default", "1.0.0", register_components)

// Registers an optimizer whose lr key has no role: the host could not tell
// which key is the base learning rate the schedule scales, and must refuse
// the plugin at load.
#include "orchestrate/plugin.h"

namespace {
void register_components(orchestrate::Registry& registry) {
  registry.optimizers().add("roleless_sgd", "an optimizer that does not say which key is its learning rate",
                            {orchestrate::real_param("lr", 0.1, "base learning rate").greater_than(0)}, nullptr);
}
}  // namespace

ORCHESTRATE_PLUGIN("no_learning_rate", "1.0.0", register_components)

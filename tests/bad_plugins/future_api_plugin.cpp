// A plugin claiming plugin API version 999 (set by CMake): the host must refuse
// it before calling anything in it, so its registration function aborts.
#include <cstdlib>

#include "orchestrate/plugin.h"

namespace {
void register_components(orchestrate::Registry&) { std::abort(); }
}  // namespace

ORCHESTRATE_PLUGIN("future_api", "9.9.9", register_components)

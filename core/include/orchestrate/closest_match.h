// "Did you mean ...?": the known name nearest a mistyped one. In the SDK's
// torch-free base, so the front end's command table uses the same rule as the
// recipe's keys and the registry's components. (registry.h declares it too,
// for the plugins that know it from there.)
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "orchestrate/api.h"

namespace orchestrate {

// The closest of `candidates` to `name` by edit distance, or "" if none is close.
ORCHESTRATE_API std::string closest_match(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace orchestrate

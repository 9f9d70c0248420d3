// --tag key=value, given to `orchestrate run` (to label a run) and to
// `orchestrate runs` (to select runs by label).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace orchestrate::cli {

// Splits each "key=value" at its first '='; the value may be empty, the key
// may not, nor come twice. A UsageError names the bad one.
std::vector<std::pair<std::string, std::string>> parse_tags(const std::vector<std::string>& tags);

}  // namespace orchestrate::cli

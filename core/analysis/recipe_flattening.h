// A resolved recipe (TOML text) as dotted keys, each value a typed table cell,
// so `orchestrate compare` lines up two recipes key by key and JSON keeps
// their types ("42" as a run name stays a string, 0.1 a number).
#pragma once

#include <map>
#include <string>

#include "analysis/table_format.h"

namespace orchestrate {

// "optimizer.lr" -> 0.001 (a number), "run.name" -> "42" (text), arrays of
// tables by index ("optimizer.wrappers.0.plugin"), other arrays as their TOML
// text ("[5, 8]"). Throws Error for text that is not TOML.
std::map<std::string, Cell> flatten_recipe(const std::string& toml_text);

}  // namespace orchestrate

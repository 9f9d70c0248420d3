// Schemas of the recipe tables the core itself reads ([run], [eval], [log]),
// declared with the same ParamSchema machinery as plugin components, so they
// are validated, defaulted, overridden and described the same way.
#pragma once

#include <string>
#include <vector>

#include "orchestrate/params.h"
#include "orchestrate/registry.h"

namespace orchestrate {

inline constexpr std::int64_t kRecipeSchemaVersion = 1;

ParamSchema run_table_schema();
ParamSchema eval_table_schema();
ParamSchema log_table_schema();

// A recipe table that names a component (`plugin = "..."`) of some kind.
struct ComponentTable {
  const char* table;         // "data"
  ComponentKind kind;        // dataset
  const char* default_plugin;  // nullptr: the table and its plugin are required
};
const std::vector<ComponentTable>& component_tables();

// Every top-level table name a recipe may have, in the order a resolved recipe prints them.
const std::vector<std::string>& known_tables();

}  // namespace orchestrate

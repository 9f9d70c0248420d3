// A recipe: the TOML file plus --set overrides, validated against the table
// registry (core_tables.h) and the named components' schemas, every default
// filled in.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/recipe/override_argument.h"
#include "limits/checked_toml.h"
#include "orchestrate/params.h"
#include "orchestrate/registry.h"

namespace orchestrate {

struct Settings;


// One resolved table (or one entry of an array of tables).
struct TableValues {
  std::string plugin;  // the component it names; "" for a core table
  Params core;         // the keys the core reads (core_tables.cpp)
  Params component;    // the keys the component's schema declares
  std::map<std::string, std::vector<TableValues>> lists;  // [[table.list]] entries, in order

  const std::vector<TableValues>& list(const std::string& name) const;
};

struct Recipe {
  std::string path;  // the recipe file as given
  std::map<std::string, TableValues> tables;  // every table of core_tables.h, defaults filled in

  const TableValues& table(const std::string& name) const;

  // The resolved recipe as TOML (defaults filled in, overrides applied): what
  // --dry-run prints and the run store keeps; loading it again gives the same
  // recipe, floats bit for bit.
  std::string resolved_toml() const;
  // "table.key" -> value text ("optimizer.wrappers.0.eta"), for the run
  // store's params table; the same value text as resolved_toml().
  std::vector<std::pair<std::string, std::string>> flattened() const;
  // [run] name, or the recipe file's stem when empty.
  std::string run_name() const;
  // The typed settings, read once when the recipe was validated (settings.h).
  std::shared_ptr<const Settings> settings;
  // What loading changed on its own, for the user to see ("orchestrate:
  // note: ..."): the keys a --set that swapped a component dropped.
  std::vector<std::string> notes;
};

// Reads, overrides and validates a recipe. Every problem found is reported,
// one per line, each starting with "file:line:column:" (or "--set ...:" for
// an override), in one RecipeError. The checks across tables
// (cross_table_checks.h) run here too, once. `reshape`, when given, rewrites the
// document after the overrides and before validation: a smoke run shrinks the
// recipe this way (engine/setup/smoke_overrides.h, a layer above the recipe).
using RecipeReshape = std::function<void(toml::table& root)>;
Recipe load_recipe(const std::string& path, const std::vector<Override>& overrides, const Registry& registry,
                   const RecipeReshape& reshape = {});

}  // namespace orchestrate

// A recipe: the TOML file plus --set overrides, validated against the core
// tables' and the named components' schemas, every default filled in.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "orchestrate/params.h"
#include "orchestrate/registry.h"

namespace orchestrate {

// One `--set table.key=value` from the command line.
struct Override {
  std::string table;
  std::string key;
  std::string value;
  std::string text() const { return table + "." + key + "=" + value; }
};

// Parses "--set" arguments; throws UsageError for one without "table.key=".
std::vector<Override> parse_overrides(const std::vector<std::string>& arguments);

struct ComponentChoice {
  std::string plugin;  // the component's registered name, e.g. "adam"
  Params params;
};

struct Recipe {
  std::string path;  // the recipe file as given
  Params run;        // [run], see core_tables.h
  Params eval;       // [eval]
  Params log;        // [log]
  ComponentChoice data;
  ComponentChoice model;
  ComponentChoice optimizer;
  ComponentChoice schedule;

  // The resolved recipe as TOML (defaults filled in, overrides applied): what
  // --dry-run prints and the run store keeps; loading it again gives the same recipe.
  std::string resolved_toml() const;
  // "table.key" -> value text, for the run store's params table.
  std::vector<std::pair<std::string, std::string>> flattened() const;
  // [run] name, or the recipe file's stem when empty.
  std::string run_name() const;
};

// Reads, overrides and validates a recipe. Every problem found is reported,
// one per line, each starting with "file:line:column:" (or "--set ...:" for
// an override), in one RecipeError.
Recipe load_recipe(const std::string& path, const std::vector<Override>& overrides, const Registry& registry);

}  // namespace orchestrate

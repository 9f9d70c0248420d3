#include "conformance/conformance_settings.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "conformance/conformance_plugins.h"
#include "engine/recipe/param_conversion.h"
#include "limits/checked_toml.h"
#include "limits/nesting_check.h"
#include "orchestrate/closest_match.h"
#include "orchestrate/error.h"

namespace orchestrate::conformance {
namespace {

std::string at(const std::string& path, const toml::source_region& where) {
  return path + ":" + std::to_string(where.begin.line) + ":" + std::to_string(where.begin.column) + ": ";
}

toml::table parse_settings_file(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw UsageError(path + ": settings file not found (give a TOML file of the component's keys)");
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw UsageError(path + ": settings file cannot be read (check its permissions)");
  check_toml_text(text.str(), path);
  try {
    return parse_toml(text.str(), path);
  } catch (const toml::parse_error& e) {
    throw RecipeError(at(path, e.source()) + "TOML syntax error: " + std::string(e.description()));
  }
}

using Keys = std::vector<std::pair<const toml::key*, const toml::node*>>;

Keys keys_of(const toml::table& table) {
  Keys keys;
  for (const auto& [key, node] : table) keys.emplace_back(&key, &node);
  return keys;
}

// One component's keys, each checked as a recipe's would be.
Params read_keys(const std::string& path, const Keys& keys, const ComponentInfo& info) {
  Params params;
  for (const auto& [key_pointer, node_pointer] : keys) {
    const toml::key& key = *key_pointer;
    const toml::node& node = *node_pointer;
    const std::string name(key.str());
    const ParamSpec* spec = info.schema.find(name);
    if (!spec) {
      const std::string nearest = closest_match(name, info.schema.names());
      throw RecipeError(at(path, key.source()) + "unknown key '" + name + "' for " + to_string(info.kind) + " " +
                        info.name + (nearest.empty() ? "" : "; did you mean '" + nearest + "'?") +
                        " (orchestrate describe " + to_string(info.kind) + " " + info.name + " lists its keys)");
    }
    std::string why;
    const auto value = value_from_toml(*spec, node, why);
    if (!value) throw RecipeError(at(path, node.source()) + "'" + name + "': " + why);
    if (const auto problem = spec->check(*value); !problem.empty())
      throw RecipeError(at(path, node.source()) + "'" + name + "': " + problem);
    params.set(name, *value);
  }
  return params;
}

}  // namespace

std::map<ComponentId, Params> read_settings_file(const std::string& path, const Registry& registry,
                                                 const std::optional<ComponentId>& named) {
  const toml::table root = parse_settings_file(path);
  std::map<ComponentId, Params> out;
  Keys top_level_keys;
  for (const auto& [key, node] : root) {
    const auto kind = node.is_table() ? kind_named(key.str()) : std::nullopt;
    if (!kind) {
      top_level_keys.emplace_back(&key, &node);
      continue;
    }
    for (const auto& [component, keys] : *node.as_table()) {
      if (!keys.is_table())
        throw RecipeError(at(path, keys.source()) + "expected a table [" + std::string(key.str()) + "." +
                          std::string(component.str()) + "] of that component's keys");
      const auto& info = registry.component(*kind, std::string(component.str()));
      out[{*kind, info.name}] = read_keys(path, keys_of(*keys.as_table()), info);
    }
  }
  if (!top_level_keys.empty()) {
    if (!named)
      throw RecipeError(path + ": keys at the top level are for the component named on the command line "
                        "(orchestrate conformance KIND NAME --settings FILE); name one, or put them in [KIND.NAME]");
    const auto& info = registry.component(named->first, named->second);
    const Params given = read_keys(path, top_level_keys, info);
    auto& params = out[*named];
    for (const auto& [key, value] : given.values()) params.set(key, value);
  }
  return out;
}

}  // namespace orchestrate::conformance

#include "conformance/conformance_plugins.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <set>

#include "conformance/conformance_settings.h"
#include "engine/setup/plugin_host.h"
#include "orchestrate/error.h"

namespace orchestrate::conformance {
namespace {

struct State {
  Selection selection;
  Registry registry;
  std::vector<std::string> directories;
  std::vector<std::string> refused;
  std::map<ComponentId, Params> settings;  // keys over each component's defaults
  std::set<std::string> only_plugins;  // with --plugin-path and no KIND NAME: the plugins found there
  bool configured = false;
};

State& state() {
  static State instance;  // lives for the whole program: the libraries must outlive every component
  return instance;
}

// For a required key: the smallest value its bounds allow, so a component
// with no default for it can still be built. A free string (a path) or a
// list has no such value: the key is named, with how to give it.
ParamValue smallest_allowed(ComponentKind kind, const std::string& name, const ParamSpec& spec) {
  const double low = spec.min ? *spec.min + (spec.min_exclusive ? 1 : 0) : 1;
  switch (spec.type) {
    case ParamType::integer: return static_cast<std::int64_t>(std::ceil(low));
    case ParamType::real: return low;
    case ParamType::boolean: return false;
    case ParamType::string:
      if (!spec.choices.empty()) return spec.choices.front();
      [[fallthrough]];
    default:
      throw UsageError(std::string(to_string(kind)) + " '" + name + "' needs its required key '" + spec.name + "' (" +
                       spec.doc + "), which has no default; give it in a settings file: --settings FILE.toml with [" +
                       to_string(kind) + "." + name + "] " + spec.name + " = ...");
  }
}

}  // namespace

void configure(const Selection& selection) {
  auto& s = state();
  s.selection = selection;
  s.directories = plugin_search_path(selection.plugin_path);
  const PluginScan scan = scan_plugins(s.registry, s.directories);
  for (const auto& refused : scan.refused) s.refused.push_back(refused.message);
  // Which copy is checked matters when one hides another (a rebuilt plugin
  // before the installed one): say so, as `orchestrate plugins` does.
  for (const auto& shadowed : scan.shadowed) std::cerr << "orchestrate: note: " << shadowed.message() << "\n";
  // --plugin-path without KIND NAME: the plugins being written, not the
  // built-ins (whose data sets may not be on this machine).
  if (!selection.kind && !selection.plugin_path.empty()) {
    const std::size_t given = s.directories.size() - plugin_search_path("").size();
    for (const auto& plugin : s.registry.plugins()) {
      const std::string dir = std::filesystem::path(plugin.library_path).parent_path().lexically_normal().string();
      for (std::size_t i = 0; i < given; ++i)
        if (dir == std::filesystem::path(s.directories[i]).lexically_normal().string()) s.only_plugins.insert(plugin.name);
    }
    // Nothing to check: said here, not by GoogleTest's empty suites.
    if (s.only_plugins.empty() && scan.refused.empty())
      throw UsageError("conformance: no plugin in --plugin-path " + selection.plugin_path +
                       ": build yours first (cmake --build build) and give the folder that holds its "
                       "liborchestrate_NAME.so");
  }
  if (selection.kind) {
    try {
      s.registry.component(*selection.kind, selection.name);
    } catch (const Error& unknown) {  // a name on the command line: a usage error, naming the known ones
      throw UsageError(unknown.what());
    }
  }
  std::optional<ComponentId> named;
  if (selection.kind) named = ComponentId{*selection.kind, selection.name};
  for (const auto& file : selection.settings_files)
    for (auto& [component, params] : read_settings_file(file, s.registry, named))
      for (const auto& [key, value] : params.values()) s.settings[component].set(key, value);
  s.configured = true;
}

Registry& registry() { return state().registry; }
const std::vector<std::string>& searched_directories() { return state().directories; }
const std::vector<std::string>& refused_plugins() { return state().refused; }
const Selection& selection() { return state().selection; }
const std::set<std::string>& selection_only_plugins() { return state().only_plugins; }

std::vector<std::string> selected_names(ComponentKind kind) {
  const auto& s = state();
  std::vector<std::string> names;
  if (!s.configured || (s.selection.kind && *s.selection.kind != kind)) return names;
  for (const auto* info : s.registry.components(kind)) {
    if (s.selection.kind ? info->name != s.selection.name
                         : !s.selection.plugin_path.empty() && !s.only_plugins.count(info->plugin))
      continue;
    names.push_back(info->name);
  }
  return names;
}

std::string name_of_param(const testing::TestParamInfo<std::string>& info) { return info.param; }

std::optional<ComponentKind> kind_named(std::string_view name) {
  for (const auto kind : all_component_kinds())
    if (name == to_string(kind)) return kind;
  return std::nullopt;
}

std::vector<std::string> kind_list() {
  std::vector<std::string> out;
  for (const auto kind : all_component_kinds()) out.emplace_back(to_string(kind));
  return out;
}

std::string kind_names() {
  std::string out;
  for (const auto& kind : kind_list()) out += (out.empty() ? "" : ", ") + kind;
  return out;
}

Params params_for(ComponentKind kind, const std::string& name) {
  const auto& schema = registry().component(kind, name).schema;
  Params params;
  const auto given = state().settings.find({kind, name});
  const bool has_settings = given != state().settings.end();
  for (const auto& spec : schema.specs()) {
    if (spec.default_value) params.set(spec.name, *spec.default_value);
    else if (!has_settings || !given->second.has(spec.name)) params.set(spec.name, smallest_allowed(kind, name, spec));
  }
  if (has_settings)
    for (const auto& [key, value] : given->second.values()) params.set(key, value);
  return params;
}

}  // namespace orchestrate::conformance

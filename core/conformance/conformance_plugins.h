// What `orchestrate conformance` checks: the plugins it loaded, the
// components selected (all of them, or one kind and name), and the settings
// each is built with. The checks themselves are GoogleTest suites, one file
// per kind (<kind>_conformance.cpp), instantiated over selected_names().
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrate/params.h"
#include "orchestrate/registry.h"

namespace orchestrate::conformance {

struct Selection {
  std::string plugin_path;                // --plugin-path, before $ORCHESTRATE_PLUGIN_PATH and the default
  std::optional<ComponentKind> kind;      // none: every component of every kind (of the
                                          // --plugin-path directories' plugins, when given)
  std::string name;                       // with kind: that component only
  std::vector<std::string> settings_files;  // --settings FILE.toml, in order
};

// Loads the plugins and reads the settings files. Called once, before
// GoogleTest instantiates the suites; throws Error (UsageError for a bad
// selection, RecipeError for a bad settings file) with a one-line message.
void configure(const Selection& selection);

Registry& registry();
// The directories searched, and every plugin file the scan refused (the
// loader's one-line reason each).
const std::vector<std::string>& searched_directories();
const std::vector<std::string>& refused_plugins();
const Selection& selection();
// With --plugin-path and no KIND NAME: the plugins in those directories,
// the only ones checked.
const std::set<std::string>& selection_only_plugins();

// The selected components of `kind`, by name: GoogleTest's parameter list.
std::vector<std::string> selected_names(ComponentKind kind);
std::string name_of_param(const testing::TestParamInfo<std::string>& info);

// A kind as the command line and settings files spell it ("lr_schedule"),
// and the list of them for messages.
std::optional<ComponentKind> kind_named(std::string_view name);
std::vector<std::string> kind_list();
std::string kind_names();

// What a component is built with: its defaults; for a required key the
// smallest value its bounds allow; then the settings files' keys for it.
Params params_for(ComponentKind kind, const std::string& name);

}  // namespace orchestrate::conformance

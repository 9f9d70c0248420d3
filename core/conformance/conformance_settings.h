// --settings FILE.toml: the keys a component is tried with, over its
// defaults. Keys at the top level are for the component named on the command
// line; a table [KIND.NAME] holds keys for that component, so one file can
// serve a check of several (the built-in datasets' samples).
//
//   # `orchestrate conformance dataset csv_manifest --settings sample.toml`
//   manifest = "data/manifest.csv"
//
//   # `orchestrate conformance --settings samples.toml`: every component
//   [dataset.image_folder]
//   root = "tests/data/fashion_mnist_folder"
//
// Relative paths in values are the user's to choose: they are read from the
// current directory, as the recipe's are.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "orchestrate/params.h"
#include "orchestrate/registry.h"

namespace orchestrate::conformance {

using ComponentId = std::pair<ComponentKind, std::string>;

// Each component's settings from `path`, every value checked against that
// component's schema in `registry`: an unknown component or key, or a value
// of the wrong type or out of range, is a RecipeError naming
// file:line:column. `named` is the component of the top-level keys (none:
// top-level keys are an error).
std::map<ComponentId, Params> read_settings_file(const std::string& path, const Registry& registry,
                                                 const std::optional<ComponentId>& named);

}  // namespace orchestrate::conformance

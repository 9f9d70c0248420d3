// Applying --set overrides to the parsed TOML document, before validation,
// so an override is checked exactly like the file's own values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "limits/checked_toml.h"

#include "engine/recipe/override_argument.h"

namespace orchestrate {

// Which document nodes came from which --set, so errors about them name the
// override instead of a file line.
using OverrideOrigins = std::map<const toml::node*, const Override*>;

// Writes every override into `root` (creating tables as needed; an index one
// past the end of an array of tables appends an entry). Problems (a path
// through a non-table, an index out of range) are appended to `problems`.
void apply_overrides(toml::table& root, const std::vector<Override>& overrides, OverrideOrigins& origins,
                     std::vector<std::string>& problems);

// The table the first `length` segments of a --set path name (a number
// addresses an entry of an array of tables), or null when there is none.
toml::table* table_at_path(toml::table& root, const std::vector<std::string>& path, std::size_t length);

}  // namespace orchestrate

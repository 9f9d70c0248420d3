// A recipe's typed settings (settings.h), read from its resolved tables.
#pragma once

#include "engine/recipe/recipe.h"
#include "engine/recipe/settings.h"

namespace orchestrate {

// The typed settings of a recipe, read once when load_recipe() validated it.
const Settings& settings_of(const Recipe& recipe);

// Reads them from the recipe's resolved tables (load_recipe does, once).
Settings read_settings(const Recipe& recipe, const Registry& registry);

}  // namespace orchestrate

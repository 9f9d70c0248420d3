// The checks that involve more than one recipe table, in one place and one
// style: each reads the typed settings (and the components' declared rules
// in the registry) and returns its problems. load_recipe runs them once,
// after every table passed its own schema, and reports each at the place of
// the table it names, with the recipe's other problems.
#pragma once

#include <string>
#include <vector>

#include "engine/recipe/settings.h"
#include "orchestrate/registry.h"

namespace orchestrate {

struct CrossTableCheck {
  std::string table;  // where a problem is located: this table's header in the recipe
  std::vector<std::string> (*problems)(const Settings& settings, const Registry& registry);
};

const std::vector<CrossTableCheck>& cross_table_checks();

}  // namespace orchestrate

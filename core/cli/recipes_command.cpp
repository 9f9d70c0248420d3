// `orchestrate recipes`: the shipped recipes and what each reproduces. A pure
// query, so the front end answers it without loading LibTorch.
#include <iostream>

#include "analysis/table_format.h"
#include "cli/command.h"
#include "cli/options.h"
#include "cli/shipped_recipes.h"

namespace orchestrate::cli {

int recipes_command(const std::vector<std::string>& arguments) {
  po::options_description options("recipes options");
  options.add_options()("paths", po::bool_switch(), "also show each recipe's file")(
      "format", po::value<std::string>()->default_value("table"), "table, csv, json or markdown");
  po::variables_map values;
  if (!parse_options("recipes", "[options]", options, {}, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  const bool paths = values["paths"].as<bool>();
  Table table{{"name", "description", "path"}, {}};
  if (!paths) table.hidden_for_people.insert("path");  // programs always get it
  for (const auto& recipe : shipped_recipes())
    table.rows.push_back({text_cell(recipe.name), text_cell(recipe.description), text_cell(recipe.path.string())});
  if (table.rows.empty()) {
    std::cerr << "no shipped recipes in " << shipped_recipe_dir().string()
              << " (reinstall with cmake --install BUILD --prefix PREFIX)\n";
    return 0;
  }
  std::cout << render(table, format);
  if (format == TableFormat::table)
    std::cout << "\nrun one with `orchestrate run NAME` (--smoke: a few steps on mock data; --dry-run: print it "
                 "resolved); files in "
              << shipped_recipe_dir().string() << "\n";
  return 0;
}

}  // namespace orchestrate::cli

#include "cli/shipped_recipes.h"

#include <algorithm>
#include <fstream>
#include <iostream>

#include "orchestrate/closest_match.h"
#include "orchestrate/error.h"

namespace orchestrate::cli {

std::filesystem::path shipped_recipe_dir() {
  std::error_code error;
  const std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  // The two executables sit at different depths of the same prefix (command.h).
  const char* relative = executable.filename() == "orchestrate-engine" ? ORCHESTRATE_RECIPES_FROM_ENGINE
                                                                       : ORCHESTRATE_RECIPES_FROM_FRONT_END;
  return (executable.parent_path() / relative).lexically_normal();
}

std::string recipe_description(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    if (line[start] != '#') return "";
    const auto text = line.find_first_not_of("# \t", start);
    return text == std::string::npos ? "" : line.substr(text);
  }
  return "";
}

std::vector<ShippedRecipe> shipped_recipes() {
  std::vector<ShippedRecipe> out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(shipped_recipe_dir(), error)) {
    if (entry.path().extension() != ".toml") continue;
    out.push_back({entry.path().stem().string(), entry.path(), recipe_description(entry.path())});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

namespace {

// `name` (with or without ".toml") in `directory`, if it is a file there.
std::optional<std::filesystem::path> find_toml_in(const std::filesystem::path& directory, const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return std::nullopt;
  std::filesystem::path candidate = directory / name;
  if (candidate.extension() != ".toml") candidate += ".toml";
  std::error_code error;
  if (!std::filesystem::is_regular_file(candidate, error)) return std::nullopt;
  return candidate;
}

}  // namespace

std::optional<std::filesystem::path> find_shipped_recipe(const std::string& name) {
  return find_toml_in(shipped_recipe_dir(), name);
}

std::string recipe_file_or_shipped(const std::string& given) {
  std::error_code error;
  if (std::filesystem::exists(given, error)) return given;
  if (auto shipped = find_shipped_recipe(given)) {
    // A file name, not a bare name: the user may have meant a file here.
    if (std::filesystem::path(given).extension() == ".toml")
      std::cerr << "orchestrate: note: no " << given << " here; the shipped recipe " << shipped->string() << "\n";
    return shipped->string();
  }
  // A path to a file that is not there, whose name is a shipped recipe's:
  // the user copied the docs' recipes/NAME.toml outside the source tree.
  if (given.find('/') != std::string::npos) {
    const std::string name = std::filesystem::path(given).filename().string();
    if (find_shipped_recipe(name) && std::filesystem::path(name).extension() == ".toml")
      throw RecipeError(given + ": no such file; for the shipped recipe give its name alone, " +
                        std::filesystem::path(name).stem().string() + " (orchestrate recipes lists them)");
  }
  // A bare name near a shipped recipe's is a typo of it, not a missing file.
  if (given.find('/') == std::string::npos) {
    std::vector<std::string> names;
    for (const auto& recipe : shipped_recipes()) names.push_back(recipe.name);
    const std::string stem = std::filesystem::path(given).stem().string();
    if (const std::string nearest = closest_match(stem, names); !nearest.empty())
      throw RecipeError(given + ": no such recipe file or shipped recipe; did you mean the shipped recipe '" +
                        nearest + "'? (orchestrate recipes lists them)");
  }
  return given;
}

std::string sweep_spec_file_or_shipped(const std::string& given) {
  std::error_code error;
  if (std::filesystem::exists(given, error)) return given;
  if (auto shipped = find_toml_in(shipped_recipe_dir() / "sweeps", given)) return shipped->string();
  return given;
}

}  // namespace orchestrate::cli

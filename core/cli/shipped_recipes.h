// The recipes shipped with orchestrate: `recipes/*.toml` of the source tree,
// installed to <prefix>/share/orchestrate/recipes (the build tree links the
// same path to the source's recipes/, so a build runs them too). Found from
// the running executable, never from $PATH or the working directory.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace orchestrate::cli {

struct ShippedRecipe {
  std::string name;                // the file's stem: resnet50_32k_lars
  std::filesystem::path path;
  std::string description;         // the file's first comment line, without "# "
};

// <prefix>/share/orchestrate/recipes of the executable running now (the front
// end in <prefix>/bin or the engine in <prefix>/libexec/orchestrate).
std::filesystem::path shipped_recipe_dir();

// Every shipped recipe, sorted by name; none when the directory is missing.
std::vector<ShippedRecipe> shipped_recipes();

// The shipped recipe called `name` (with or without ".toml"), if any.
std::optional<std::filesystem::path> find_shipped_recipe(const std::string& name);

// What a RECIPE argument names: the file as given when it exists, else the
// shipped recipe of that name (a note on stderr when the name ends in .toml:
// the user may have meant a file here), else the argument unchanged (loading
// it then says that no such file exists). A missing path whose file name is
// a shipped recipe's is a RecipeError that names the shipped one. Every
// command that takes a recipe uses it.
std::string recipe_file_or_shipped(const std::string& given);

// What a sweep SPEC argument names: the file as given when it exists, else
// the shipped spec of that name (recipes/sweeps/), else the argument unchanged.
std::string sweep_spec_file_or_shipped(const std::string& given);

// The first line of `path` that is a comment, without its "#" and leading
// blanks; "" when there is none before the first non-comment line.
std::string recipe_description(const std::filesystem::path& path);

}  // namespace orchestrate::cli

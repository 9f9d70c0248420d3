// One `--set path=value` from the command line, parsed but not yet applied
// (recipe_overrides.h applies it). Free of LibTorch and toml++.
#pragma once

#include <string>
#include <vector>

namespace orchestrate {

// `path` is dotted; a number addresses an entry of an array of tables:
// optimizer.wrappers.0.eta=0.002.
struct Override {
  std::vector<std::string> path;
  std::string value;  // TOML value text; a bare word that is not TOML is taken as a string
  std::string text;   // as typed, for error messages
};

// Parses "--set" arguments; throws UsageError for one without "table.key=",
// or one whose key or value nests deeper than limits::kMaxNesting.
std::vector<Override> parse_overrides(const std::vector<std::string>& arguments);

}  // namespace orchestrate

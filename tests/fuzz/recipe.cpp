// A recipe and a --set: any bytes as recipe text, the way `run` reads a file
// and `compare`/`rerun` read a stored recipe (nesting check, toml++,
// flattening), and the input's last line as one `--set` argument applied to
// the parsed document, as the command line's are. toml++ is compiled into
// this target (checked_toml.cpp), so it is instrumented and fuzzed too. Bad input
// must surface as orchestrate::Error (RecipeError, UsageError) or toml++'s
// parse_error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/recipe_flattening.h"
#include "engine/recipe/recipe_overrides.h"
#include "limits/checked_toml.h"
#include "limits/nesting_check.h"
#include "orchestrate/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    orchestrate::flatten_recipe(text);  // the stored recipe's path
  } catch (const orchestrate::Error&) {
  }
  toml::table root;
  try {
    orchestrate::check_toml_text(text, "fuzz.toml");  // the recipe file's path
    root = orchestrate::parse_toml(text, "fuzz.toml");
  } catch (const orchestrate::Error&) {
    return 0;
  } catch (const toml::parse_error&) {
    return 0;
  }
  const std::string last_line = text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  try {
    const auto overrides = orchestrate::parse_overrides({last_line});
    orchestrate::OverrideOrigins origins;
    std::vector<std::string> problems;
    orchestrate::apply_overrides(root, overrides, origins, problems);
    // Every node an override names must still be in the document.
    for (const auto& [node, override_of] : origins)
      if (node == nullptr || override_of == nullptr) __builtin_trap();
  } catch (const orchestrate::Error&) {
  }
  return 0;
}

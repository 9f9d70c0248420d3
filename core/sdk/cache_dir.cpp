#include "orchestrate/cache_dir.h"

#include <cstdlib>

namespace orchestrate {

std::string orchestrate_cache_dir() {
  const auto set = [](const char* name) -> const char* {
    const char* value = std::getenv(name);
    return value && *value ? value : nullptr;
  };
  if (const char* cache = set("ORCHESTRATE_CACHE")) return cache;
  if (const char* xdg = set("XDG_CACHE_HOME")) return std::string(xdg) + "/orchestrate";
  if (const char* home = set("HOME")) return std::string(home) + "/.cache/orchestrate";
  return "";
}

}  // namespace orchestrate

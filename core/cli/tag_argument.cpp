#include "cli/tag_argument.h"

#include "orchestrate/error.h"

namespace orchestrate::cli {

std::vector<std::pair<std::string, std::string>> parse_tags(const std::vector<std::string>& tags) {
  std::vector<std::pair<std::string, std::string>> parsed;
  for (const std::string& tag : tags) {
    const auto equals = tag.find('=');
    if (equals == std::string::npos || equals == 0)
      throw UsageError("--tag " + tag + ": expected key=value, e.g. --tag experiment=lr_sweep");
    const std::string key = tag.substr(0, equals);
    for (const auto& earlier : parsed)
      if (earlier.first == key) throw UsageError("--tag " + key + ": given twice; give each key once");
    parsed.emplace_back(key, tag.substr(equals + 1));
  }
  return parsed;
}

}  // namespace orchestrate::cli

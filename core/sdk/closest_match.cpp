#include "orchestrate/closest_match.h"

#include <algorithm>

namespace orchestrate {
namespace {

// Levenshtein distance. Written by hand: it is a dozen lines, and no library
// the project already uses offers it.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest_match(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 2) + 1;  // beyond this, a suggestion misleads
  for (const auto& candidate : candidates) {
    size_t d = edit_distance(name, candidate);
    if (candidate.find(name) != std::string::npos || std::string_view(name).find(candidate) != std::string_view::npos)
      d = std::min<size_t>(d, 1);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace orchestrate

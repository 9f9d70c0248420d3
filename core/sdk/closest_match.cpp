#include "orchestrate/closest_match.h"

#include <algorithm>
#include <utility>

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
  // Ranked by (closeness, edit distance): a name that contains the typed one,
  // or that it contains, counts as one edit away, and among those the one
  // nearest by edit distance wins ("resnet": resnet_v1, not inception_resnet_v2).
  std::string best;
  std::pair<size_t, size_t> best_rank{std::max<size_t>(2, name.size() / 2) + 1, 0};  // beyond this, a suggestion misleads
  for (const auto& candidate : candidates) {
    const size_t distance = edit_distance(name, candidate);
    size_t closeness = distance;
    if (candidate.find(name) != std::string::npos || std::string_view(name).find(candidate) != std::string_view::npos)
      closeness = std::min<size_t>(closeness, 1);
    if (const std::pair rank{closeness, distance}; rank < best_rank) {
      best_rank = rank;
      best = candidate;
    }
  }
  return best;
}

}  // namespace orchestrate

#include "plot/run_labels.h"

#include <set>

#include "analysis/run_comparison.h"

namespace orchestrate::plot {
namespace {

std::string name_and_id(const RunSummary& run) { return run.name + " #" + std::to_string(run.id); }

}  // namespace

std::vector<std::string> run_labels(const std::vector<RunDetails>& runs) {
  auto differences = recipe_differences(runs);
  std::erase_if(differences, [](const auto& difference) { return difference.first == "run.name"; });

  std::vector<std::string> labels;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    std::string label;
    for (std::size_t k = 0; k < differences.size() && k < kMaxLabelKeys; ++k) {
      const auto& [key, cells] = differences[k];
      if (!label.empty()) label += ", ";
      label += key + "=" + (cells[r].text.empty() ? "(none)" : cells[r].text);
    }
    if (differences.size() > kMaxLabelKeys)
      label += ", +" + std::to_string(differences.size() - kMaxLabelKeys) + " more";
    labels.push_back(label);
  }
  const std::set<std::string> distinct(labels.begin(), labels.end());
  if (differences.empty() || distinct.size() < labels.size())
    for (std::size_t r = 0; r < runs.size(); ++r)
      labels[r] =
          labels[r].empty() ? name_and_id(runs[r].summary) : labels[r] + " (" + name_and_id(runs[r].summary) + ")";
  return labels;
}

}  // namespace orchestrate::plot

#include "plot/sweep_chart.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include "orchestrate/error.h"

namespace orchestrate::plot {

namespace {

std::optional<double> number_of(const std::string& toml) {
  double value = 0;
  const auto [end, error] = std::from_chars(toml.data(), toml.data() + toml.size(), value);
  if (error != std::errc() || end != toml.data() + toml.size()) return std::nullopt;
  return value;
}

// A TOML string's words without the quotes; other values as written.
std::string word_of(const std::string& toml) {
  if (toml.size() >= 2 && (toml.front() == '"' || toml.front() == '\'') && toml.back() == toml.front())
    return toml.substr(1, toml.size() - 2);
  return toml;
}

}  // namespace

Chart sweep_chart(const SweepDetails& sweep) {
  const SweepRecord& record = sweep.sweep;
  std::vector<const SweepTrialRecord*> valued;
  for (const auto& trial : sweep.trials)
    if (trial.value && trial.state != "failed") valued.push_back(&trial);
  if (valued.empty())
    throw UsageError("sweep show --plot: sweep " + std::to_string(record.id) + " has no trial with a value of " +
                     record.metric + " yet");
  const SweepTrialRecord* best = nullptr;
  if (record.best_trial)
    for (const auto* trial : valued)
      if (trial->trial == *record.best_trial) best = trial;

  Chart chart;
  chart.title = "sweep " + std::to_string(record.id) + " '" + record.name + "': " + record.metric + " of each trial (" +
                record.mode + " is best)";
  const std::size_t keys = sweep.trials.front().overrides.size();
  for (std::size_t k = 0; k < keys; ++k) {
    const std::string& key = sweep.trials.front().overrides[k].first;
    std::vector<std::string> values;  // in the order first seen
    bool numeric = true;
    for (const auto& trial : sweep.trials) {
      const std::string& value = trial.overrides.at(k).second;
      if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
      numeric = numeric && number_of(value).has_value();
    }
    if (values.size() < 2) continue;  // the same for every trial: nothing to see against it
    Panel panel;
    panel.title = key;
    panel.x_label = key;
    panel.y_label = record.metric;
    const auto x_of = [&](const SweepTrialRecord& trial) {
      const std::string& value = trial.overrides.at(k).second;
      return numeric ? *number_of(value)
                     : static_cast<double>(std::find(values.begin(), values.end(), value) - values.begin());
    };
    if (numeric) {
      double low = *number_of(values.front()), high = low;
      for (const auto& value : values) {
        low = std::min(low, *number_of(value));
        high = std::max(high, *number_of(value));
      }
      panel.x_log = low > 0 && high / low >= 10;
      panel.x_fits_data = true;
    } else {
      for (const auto& value : values) panel.x_categories.push_back(word_of(value));
    }
    Curve finished{"run to the end", {}, CurveStyle::points, 0, {}};
    Curve stopped{"stopped early (its value at its last rung)", {}, CurveStyle::points, 1, {}};
    for (const auto* trial : valued)
      (trial->state == "stopped" ? stopped : finished).points.emplace_back(x_of(*trial), *trial->value);
    for (Curve* curve : {&finished, &stopped})
      if (!curve->points.empty()) panel.curves.push_back(std::move(*curve));
    if (best)
      panel.curves.push_back({"the best trial", {{x_of(*best), *best->value}}, CurveStyle::points, 3,
                              {"trial " + std::to_string(best->trial)}});
    chart.panels.push_back(std::move(panel));
  }
  if (chart.panels.empty())
    throw UsageError("sweep show --plot: sweep " + std::to_string(record.id) +
                     " gives every trial the same values: no parameter to plot against");
  return chart;
}

}  // namespace orchestrate::plot

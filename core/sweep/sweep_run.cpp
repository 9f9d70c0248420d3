#include "sweep/sweep_run.h"

#include <algorithm>
#include <set>

#include "engine/recipe/override_argument.h"
#include "engine/recipe/recipe.h"
#include "engine/recipe/recipe_settings.h"
#include "orchestrate/error.h"
#include "orchestrate/input_limits.h"
#include "sweep/trial_problems.h"

namespace orchestrate::sweep {

namespace {

std::vector<std::string> set_arguments(const Trial& trial) {
  std::vector<std::string> out;
  for (const auto& [key, value] : trial.overrides) out.push_back(key + "=" + value);
  return out;
}

}  // namespace

std::vector<std::string> rankable_metrics(bool evaluates) {
  // The run's final metrics: the log window's (log_window.cpp) and the evaluator's (evaluator.cpp).
  std::vector<std::string> metrics{"train/loss", "train/top1"};
  if (evaluates) metrics.insert(metrics.end(), {"eval/top1", "eval/top5", "eval/loss"});
  return metrics;
}

void check_trials(const SweepSpec& spec, const std::vector<Trial>& trials, const std::string& recipe_path,
                  const Registry& registry) {
  TrialProblems trial_problems(spec);
  std::set<std::string> logged_by_all;
  bool first = true;
  for (const Trial& trial : trials) {
    try {
      const Recipe recipe = load_recipe(recipe_path, parse_overrides(set_arguments(trial)), registry);
      const auto logged = rankable_metrics(settings_of(recipe).eval.enabled);
      if (first) logged_by_all.insert(logged.begin(), logged.end());
      else
        for (auto it = logged_by_all.begin(); it != logged_by_all.end();)
          it = std::find(logged.begin(), logged.end(), *it) == logged.end() ? logged_by_all.erase(it) : std::next(it);
      first = false;
    } catch (const Error& e) {
      trial_problems.add(trial, e.what());
    }
    if (trial_problems.size() >= limits::kMaxErrorLines) break;
  }
  std::vector<std::string> problems = trial_problems.lines();
  if (!first && !logged_by_all.count(spec.metric)) {
    std::string known;
    for (const auto& name : logged_by_all) known += (known.empty() ? "" : ", ") + name;
    problems.push_back(spec.metric_where + ": metric \"" + spec.metric + "\" is not one that " + recipe_path +
                       " records at its end (it records " + known + ")");
  }
  if (!problems.empty()) {
    std::string text;
    for (const auto& line : problems) text += (text.empty() ? "" : "\n") + line;
    throw RecipeError(text);
  }
}

}  // namespace orchestrate::sweep

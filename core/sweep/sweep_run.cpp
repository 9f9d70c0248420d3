#include "sweep/sweep_run.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "engine/recipe/override_argument.h"
#include "engine/recipe/recipe.h"
#include "engine/recipe/recipe_settings.h"
#include "orchestrate/error.h"
#include "orchestrate/input_limits.h"

namespace orchestrate::sweep {

namespace {

std::string overrides_text(const Trial& trial) {
  std::string out;
  for (const auto& [key, value] : trial.overrides) out += (out.empty() ? "" : " ") + key + "=" + value;
  return out;
}

std::vector<std::string> set_arguments(const Trial& trial) {
  std::vector<std::string> out;
  for (const auto& [key, value] : trial.overrides) out.push_back(key + "=" + value);
  return out;
}

// Each problem said once, however many trials meet it.
class TrialProblems {
 public:
  explicit TrialProblems(const SweepSpec& spec) : spec_(spec) {}

  // A trial's recipe error, line by line: a line about one of the trial's
  // --set values goes to that parameter's place in the spec; another (a
  // rule across keys) names the first trial that broke it.
  void add(const Trial& trial, const std::string& error) {
    std::size_t begin = 0;
    while (begin < error.size()) {
      const std::size_t end = std::min(error.find('\n', begin), error.size());
      add_line(trial, error.substr(begin, end - begin));
      begin = end + 1;
    }
  }
  std::size_t size() const { return problems_.size(); }
  // The parameters' problems in the order of their lines in the spec, then the trials'.
  std::vector<std::string> lines() const {
    std::vector<const Problem*> ordered;
    for (const Problem& problem : problems_) ordered.push_back(&problem);
    std::stable_sort(ordered.begin(), ordered.end(), [](const Problem* a, const Problem* b) {
      return a->line < b->line;
    });
    std::vector<std::string> out;
    for (const Problem* problem : ordered) {
      const std::size_t others = problem->trials.size() - 1;
      const bool counted = problem->line == kNoParameter && others > 0;
      out.push_back(problem->text + (!counted ? "" : " (and " + std::to_string(others) + " other trial" +
                                                     (others == 1 ? ")" : "s)")));
    }
    return out;
  }

 private:
  static constexpr std::size_t kNoParameter = static_cast<std::size_t>(-1);
  struct Problem {
    std::string same;       // what makes two trials' lines one problem
    std::string text;       // as the first trial said it
    std::size_t line;       // its parameter's line in the spec, or kNoParameter: a rule across keys
    std::set<std::int64_t> trials;
  };

  void add_line(const Trial& trial, const std::string& line) {
    for (const auto& [set_key, value] : trial.overrides) {
      const std::string& key = set_key;  // a binding a lambda can take
      const std::string prefix = "--set " + key + "=" + value + ": ";
      if (!line.starts_with(prefix)) continue;
      const auto parameter = std::find_if(spec_.parameters.begin(), spec_.parameters.end(),
                                          [&](const Parameter& p) { return p.key == key; });
      const bool found = parameter != spec_.parameters.end();
      // One line for a problem of the key's, whichever value met it first; the value says which.
      const std::string where = (found ? parameter->where : spec_.path) + ": " + key;
      note(where + ": " + line.substr(prefix.size()), where + " = " + value + ": " + line.substr(prefix.size()),
           found ? line_of(parameter->where) : kNoParameter, trial);
      return;
    }
    note(line, spec_.path + ": trial " + std::to_string(trial.index) + " (" + overrides_text(trial) + "): " + line,
         kNoParameter, trial);
  }
  // 7 of "spec.toml:7:19".
  static std::size_t line_of(const std::string& where) {
    const std::size_t last = where.rfind(':');
    const std::size_t before = last == std::string::npos || last == 0 ? std::string::npos : where.rfind(':', last - 1);
    if (before == std::string::npos) return kNoParameter - 1;
    std::size_t line = 0;
    std::from_chars(where.data() + before + 1, where.data() + last, line);
    return line;
  }
  void note(const std::string& same, const std::string& text, std::size_t line, const Trial& trial) {
    const auto found = std::find_if(problems_.begin(), problems_.end(), [&](const Problem& p) { return p.same == same; });
    if (found != problems_.end()) found->trials.insert(trial.index);
    else problems_.push_back({same, text, line, {trial.index}});
  }

  const SweepSpec& spec_;
  std::vector<Problem> problems_;  // in the order first met
};

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

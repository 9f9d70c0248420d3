#include "sweep/sweep_run.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/recipe/override_argument.h"
#include "engine/recipe/recipe.h"
#include "engine/recipe/recipe_settings.h"
#include "engine/train/stop_signal.h"
#include "orchestrate/error.h"
#include "orchestrate/input_limits.h"
#include "store/run_store.h"

namespace orchestrate::sweep {

namespace fs = std::filesystem;

namespace {

const std::string kErrorPrefix = "orchestrate: error: ";

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

std::string last_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

std::string duration_text(double seconds) {
  const auto s = static_cast<long long>(std::max(0.0, seconds));
  std::ostringstream out;
  if (s >= 3600) out << s / 3600 << "h" << (s % 3600) / 60 << "m";
  else if (s >= 60) out << s / 60 << "m" << s % 60 << "s";
  else out << s << "s";
  return out.str();
}

bool better(const SweepSpec& spec, double a, double b) { return spec.mode == Mode::max ? a > b : a < b; }

// What `run --format json` printed for the trial (print_outcome_json).
void read_outcome(const std::string& path, const std::string& metric, TrialOutcome& outcome) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    const auto json = nlohmann::json::parse(text.str());
    outcome.status = json.at("status").get<std::string>();
    outcome.run_id = json.at("run_id").get<std::int64_t>();
    const auto& metrics = json.at("final_metrics");
    if (metrics.contains(metric) && metrics.at(metric).is_number()) outcome.value = metrics.at(metric).get<double>();
  } catch (const std::exception&) {
    // no outcome: the run failed before it printed one; its log says why
  }
}

// The newest run in the store; 0 for none (or no store yet).
std::int64_t newest_run_id(const std::string& db) {
  if (!fs::exists(db)) return 0;
  std::int64_t newest = 0;
  for (const RunSummary& run : RunStore(db, StoreAccess::read_only).find_runs(RunFilter{}))
    newest = std::max(newest, run.id);
  return newest;
}

// A trial whose run failed printed no outcome; its run is in the store all
// the same, tagged with the sweep and the trial, and newer than `before`
// (an earlier sweep of the same name has the same tags).
void link_failed_runs(const SweepSpec& spec, const std::string& db, std::int64_t before,
                      std::vector<TrialOutcome>& outcomes) {
  if (!fs::exists(db)) return;
  RunFilter tagged;
  tagged.tags = {{"sweep", spec.name}};
  const RunStore store(db, StoreAccess::read_only);
  for (const RunSummary& run : store.find_runs(tagged)) {
    const auto trial = run.tags.find("trial");
    if (trial == run.tags.end() || run.id <= before) continue;
    for (TrialOutcome& outcome : outcomes)
      if (outcome.run_id == 0 && std::to_string(outcome.trial.index) == trial->second) outcome.run_id = run.id;
  }
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
  std::vector<std::string> problems;
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
      std::string reason = e.what();
      std::replace(reason.begin(), reason.end(), '\n', ' ');
      problems.push_back(spec.path + ": trial " + std::to_string(trial.index) + " (" + overrides_text(trial) +
                         "): " + reason);
    }
    if (problems.size() >= limits::kMaxErrorLines) break;
  }
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

std::vector<TrialOutcome> run_trials(const SweepSpec& spec, const std::vector<Trial>& trials, const SweepSetup& setup,
                                     const std::vector<Slot>& slots) {
  fs::create_directories(setup.output_dir);
  std::vector<Job> jobs;
  std::vector<TrialOutcome> outcomes;
  for (const Trial& trial : trials) {
    Job job;
    job.trial = trial.index;
    job.program = setup.engine;
    const std::string stem = (fs::path(setup.output_dir) / ("trial-" + std::to_string(trial.index))).string();
    job.stdout_path = stem + ".json";
    job.stderr_path = stem + ".log";
    job.arguments = {"run", setup.recipe_path, "--quiet", "--format", "json", "--db", setup.db,
                     "--tag", "sweep=" + spec.name, "--tag", "trial=" + std::to_string(trial.index),
                     "--set", "run.name=" + spec.name + "-" + std::to_string(trial.index),
                     "--set", "run.threads=" + std::to_string(spec.threads)};
    for (const auto& set : set_arguments(trial)) job.arguments.insert(job.arguments.end(), {"--set", set});
    if (spec.nproc > 1) job.arguments.insert(job.arguments.end(), {"--nproc", std::to_string(spec.nproc)});
    job.arguments.insert(job.arguments.end(), setup.run_arguments.begin(), setup.run_arguments.end());
    jobs.push_back(std::move(job));
    outcomes.push_back({trial});
  }
  const bool tty = isatty(STDERR_FILENO);
  const auto started = std::chrono::steady_clock::now();
  int done = 0, failed = 0, running_now = 0;
  double trial_seconds = 0;
  std::optional<std::size_t> best;
  const auto status_line = [&]() {
    std::ostringstream line;
    line << "sweep " << spec.name << ": " << done << "/" << trials.size() << " done, " << running_now << " running, "
         << failed << " failed";
    if (best)
      line << "; best " << spec.metric << " " << *outcomes[*best].value << " (trial " << outcomes[*best].trial.index
           << ")";
    const std::size_t left = trials.size() - done;
    if (done > 0 && left > 0)
      line << "; ETA " << duration_text(trial_seconds / done * std::ceil(static_cast<double>(left) / slots.size()));
    return line.str();
  };
  const std::int64_t runs_before = newest_run_id(setup.db);
  StopSignal stop;
  LocalExecutor executor(slots);
  executor.run(
      jobs,
      [&](const Finished& finished) {
        TrialOutcome& outcome = outcomes[finished.job->trial];
        running_now = finished.still_running;
        outcome.seconds = finished.seconds;
        read_outcome(finished.job->stdout_path, spec.metric, outcome);
        if (finished.exit_code != 0 && outcome.status == "pending") outcome.status = "failed";
        if (outcome.status == "failed") {
          outcome.reason = last_line_of(finished.job->stderr_path);
          if (outcome.reason.rfind(kErrorPrefix, 0) == 0) outcome.reason.erase(0, kErrorPrefix.size());
        }
        ++done;
        failed += outcome.status == "failed";
        trial_seconds += finished.seconds;
        if (outcome.value && (!best || better(spec, *outcome.value, *outcomes[*best].value)))
          best = finished.job->trial;
        std::cerr << (tty ? "\r\033[K" : "") << "trial " << outcome.trial.index << " " << outcome.status
                  << (outcome.value ? " " + spec.metric + " " + std::to_string(*outcome.value) : "")
                  << (outcome.reason.empty() ? "" : ": " + outcome.reason) << " (" << duration_text(finished.seconds)
                  << ")\n";
        if (!tty) std::cerr << status_line() << "\n";
      },
      [&](int running) {
        running_now = running;
        if (tty) std::cerr << "\r\033[K" << status_line() << std::flush;
      },
      [&]() { return stop.requested(); });
  if (tty) std::cerr << "\r\033[K";
  link_failed_runs(spec, setup.db, runs_before, outcomes);
  std::cerr << "sweep " << spec.name << ": " << done << " of " << trials.size() << " trials in "
            << duration_text(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count())
            << (stop.requested() ? " (stopped by " + stop_signal_name(stop.signal_number()) + ")" : "") << "\n";
  return outcomes;
}

Table ranking_table(const SweepSpec& spec, std::vector<TrialOutcome> outcomes) {
  std::stable_sort(outcomes.begin(), outcomes.end(), [&](const TrialOutcome& a, const TrialOutcome& b) {
    if (a.value.has_value() != b.value.has_value()) return a.value.has_value();
    return a.value && b.value && better(spec, *a.value, *b.value);
  });
  // "value" is the spec's metric; JSON gathers the parameters under "parameters".
  Table table{{"rank", "trial", "run", "status", "value", "seconds"}, {}};
  for (const auto& parameter : spec.parameters) table.headers.push_back(parameter.key);
  table.headers.push_back("reason");
  table.json_groups.push_back({"parameters", 6, spec.parameters.size()});
  std::int64_t rank = 0;
  for (const TrialOutcome& outcome : outcomes) {
    std::vector<Cell> row{outcome.value ? integer_cell(++rank) : Cell(), integer_cell(outcome.trial.index),
                          outcome.run_id ? integer_cell(outcome.run_id) : Cell(), text_cell(outcome.status),
                          outcome.value ? number_cell(*outcome.value, 4) : Cell(), number_cell(outcome.seconds, 1)};
    for (const auto& [key, value] : outcome.trial.overrides) row.push_back(Cell(value));
    row.push_back(outcome.reason.empty() ? Cell() : text_cell(outcome.reason));
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace orchestrate::sweep

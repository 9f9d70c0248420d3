#include "sweep/sweep_ranking.h"

#include <algorithm>
#include <tuple>

namespace orchestrate::sweep {

namespace {

int group_of(const SweepTrialRecord& trial) {
  if (trial.state == "failed") return 4;
  if (!trial.value) return 3;
  if (trial.state == "finished") return 0;
  if (trial.state == "stopped") return 1;
  return 2;
}

}  // namespace

std::vector<SweepTrialRecord> ranked(std::vector<SweepTrialRecord> trials, Mode mode) {
  std::stable_sort(trials.begin(), trials.end(), [&](const SweepTrialRecord& a, const SweepTrialRecord& b) {
    const int ga = group_of(a), gb = group_of(b);
    if (ga != gb) return ga < gb;
    if (ga == 1 && a.rung != b.rung) return a.rung.value_or(-1) > b.rung.value_or(-1);
    if (a.value && b.value && *a.value != *b.value)
      return mode == Mode::max ? *a.value > *b.value : *a.value < *b.value;
    return a.trial < b.trial;
  });
  return trials;
}

std::optional<std::int64_t> best_trial(const std::vector<SweepTrialRecord>& trials, Mode mode) {
  const auto order = ranked(trials, mode);
  if (order.empty() || group_of(order.front()) > 2) return std::nullopt;
  return order.front().trial;
}

Table ranking_table(const std::vector<SweepTrialRecord>& trials, Mode mode) {
  // "value" is the sweep's metric; JSON gathers the parameters under "parameters".
  Table table;
  table.headers = {"rank", "trial", "run", "state", "value", "rung", "step", "seconds"};
  const std::size_t first_parameter = table.headers.size();
  if (!trials.empty())
    for (const auto& [key, value] : trials.front().overrides) table.headers.push_back(key);
  table.json_groups.push_back({"parameters", first_parameter, table.headers.size() - first_parameter});
  table.headers.push_back("reason");
  std::int64_t rank = 0;
  for (const SweepTrialRecord& trial : ranked(trials, mode)) {
    const bool ranks = group_of(trial) <= 2;
    std::vector<Cell> row{ranks ? integer_cell(++rank) : Cell(),
                          integer_cell(trial.trial),
                          trial.run_id ? integer_cell(trial.run_id) : Cell(),
                          text_cell(trial.state),
                          trial.value ? number_cell(*trial.value, 4) : Cell(),
                          trial.rung ? integer_cell(*trial.rung) : Cell(),
                          trial.step ? integer_cell(*trial.step) : Cell(),
                          number_cell(trial.seconds, 1)};
    for (const auto& [key, value] : trial.overrides) row.push_back(Cell(value));
    row.push_back(trial.reason.empty() ? Cell() : text_cell(trial.reason));
    table.rows.push_back(std::move(row));
  }
  return table;
}

Mode mode_named(const std::string& name) { return name == "min" ? Mode::min : Mode::max; }

const char* mode_name(Mode mode) { return mode == Mode::max ? "max" : "min"; }

const char* scheduler_name(Scheduler scheduler) {
  switch (scheduler) {
    case Scheduler::asha: return "asha";
    case Scheduler::median: return "median";
    case Scheduler::none: break;
  }
  return "none";
}

}  // namespace orchestrate::sweep

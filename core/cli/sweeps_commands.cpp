// `orchestrate sweeps` and `orchestrate sweep show SWEEP`: the sweeps the run
// store keeps (sweep_records.h), read-only, in the front end.
#include <iostream>

#include "analysis/table_format.h"
#include "cli/command.h"
#include "cli/options.h"
#include "orchestrate/error.h"
#include "plot/gnuplot_chart.h"
#include "plot/sweep_chart.h"
#include "store/run_store.h"
#include "sweep/sweep_ranking.h"

namespace orchestrate::cli {

namespace {

std::size_t count_state(const SweepDetails& sweep, const std::string& state) {
  std::size_t count = 0;
  for (const auto& trial : sweep.trials) count += trial.state == state;
  return count;
}

}  // namespace

int sweeps_command(const std::vector<std::string>& arguments) {
  po::options_description options("sweeps options");
  add_db_option(options);
  options.add_options()("format", po::value<std::string>()->default_value("table"), "table, csv, json or markdown");
  po::variables_map values;
  if (!parse_options("sweeps", "[options]", options, {}, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  const RunStore store = open_existing_store(values);
  Table table;
  table.headers = {"id",     "name", "state",     "trials",     "finished",   "stopped",   "failed",
                   "metric", "mode", "scheduler", "best_trial", "best_value", "started_at"};
  for (const SweepRecord& listed : store.list_sweeps()) {
    const auto sweep = store.find_sweep(std::to_string(listed.id));
    if (!sweep) continue;  // deleted since the list was read
    std::optional<double> best_value;
    if (listed.best_trial)
      for (const auto& trial : sweep->trials)
        if (trial.trial == *listed.best_trial) best_value = trial.value;
    table.rows.push_back({integer_cell(listed.id), text_cell(listed.name), text_cell(listed.state),
                          integer_cell(static_cast<std::int64_t>(sweep->trials.size())),
                          integer_cell(static_cast<std::int64_t>(count_state(*sweep, "finished"))),
                          integer_cell(static_cast<std::int64_t>(count_state(*sweep, "stopped"))),
                          integer_cell(static_cast<std::int64_t>(count_state(*sweep, "failed"))),
                          text_cell(listed.metric), text_cell(listed.mode), text_cell(listed.scheduler),
                          listed.best_trial ? integer_cell(*listed.best_trial) : Cell(),
                          best_value ? number_cell(*best_value, 4) : Cell(), time_cell(listed.started_at)});
  }
  std::cout << render(table, format);
  return 0;
}

int sweep_show_command(const std::vector<std::string>& arguments) {
  po::options_description options("sweep show options");
  add_db_option(options);
  options.add_options()("sweep", po::value<std::string>()->required(), "the sweep's id, or its name (the newest)")(
      "format", po::value<std::string>()->default_value("table"), "table, csv, json or markdown")(
      "plot", po::value<std::string>(),
      "also draw the metric against each parameter the sweep varied, one point a trial, into FILE.svg or FILE.png");
  po::positional_options_description positional;
  positional.add("sweep", 1);
  po::variables_map values;
  if (!parse_options("sweep show", "SWEEP [options]", options, positional, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  const RunStore store = open_existing_store(values);
  const std::string wanted = values["sweep"].as<std::string>();
  const auto sweep = store.find_sweep(wanted);
  if (!sweep)
    throw UsageError("sweep show: no sweep '" + wanted + "' in " + store.path() +
                     " (orchestrate sweeps --db " + store.path() + " lists them)");
  const SweepRecord& record = sweep->sweep;
  if (values.count("plot")) {
    plot::draw_chart(plot::sweep_chart(*sweep), values["plot"].as<std::string>());
    std::cerr << "drew " << values["plot"].as<std::string>() << "\n";
  }
  if (format == TableFormat::table) {
    std::cout << "sweep " << record.id << " '" << record.name << "' " << record.state << ": " << sweep->trials.size()
              << " trials of " << record.recipe_path << ", ranked by " << record.metric << " (" << record.mode
              << "), early stopping: " << record.scheduler << "\n"
              << "started " << record.started_at << (record.ended_at.empty() ? "" : ", ended " + record.ended_at)
              << "; spec " << record.spec_path << "\n";
    if (record.state == "lost" || record.state == "stopped")
      std::cout << "resume it: orchestrate sweep --resume " << record.id << " --db " << store.path() << "\n";
    std::cout << "\n";
  }
  std::cout << render(sweep::ranking_table(sweep->trials, sweep::mode_named(record.mode)), format);
  return 0;
}

}  // namespace orchestrate::cli

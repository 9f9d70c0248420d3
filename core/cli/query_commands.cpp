// `orchestrate runs` and `orchestrate report`: read-only queries over the run store.
#include <filesystem>
#include <iostream>

#include "command.h"
#include "options.h"
#include "orchestrate/error.h"
#include "reports.h"
#include "run_store.h"

namespace orchestrate::cli {

int runs_command(const std::vector<std::string>& arguments) {
  po::options_description options("runs options");
  add_db_option(options);
  options.add_options()("limit,n", po::value<std::size_t>()->default_value(20), "newest N runs; 0 for all")(
      "format", po::value<std::string>()->default_value("table"), "table, csv or json");
  po::variables_map values;
  if (!parse_options("runs", "[options]", options, {}, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  const RunStore store = open_existing_store(values);
  std::cout << render(runs_table(store.list_runs(values["limit"].as<std::size_t>())), format);
  return 0;
}

int report_command(const std::vector<std::string>& arguments) {
  po::options_description options("report options");
  options.add_options()("report", po::value<std::string>()->required(), "which report: throughput")(
      "runs", po::value<std::vector<std::string>>()->multitoken(), "run ids or names; default: the newest run")(
      "format", po::value<std::string>()->default_value("table"), "table, csv or json");
  add_db_option(options);
  po::positional_options_description positional;
  positional.add("report", 1).add("runs", -1);
  po::variables_map values;
  if (!parse_options("report", "throughput [RUN]... [options]", options, positional, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  if (const auto& report = values["report"].as<std::string>(); report != "throughput")
    throw UsageError("report: unknown report '" + report + "' (known: throughput)");

  const RunStore store = open_existing_store(values);
  std::vector<RunSummary> runs;
  if (values.count("runs")) {
    for (const auto& id : values["runs"].as<std::vector<std::string>>()) {
      auto run = store.find_run(id);
      if (!run) throw UsageError("report: no run '" + id + "' in " + store.path() + " (see orchestrate runs)");
      runs.push_back(*run);
    }
  } else {
    runs = store.list_runs(1);
    if (runs.empty()) throw UsageError("report: " + store.path() + " holds no runs yet");
  }
  std::vector<ThroughputRow> rows;
  for (const auto& run : runs) rows.push_back(throughput_of(store, run));
  std::cout << render(throughput_table(rows), format);
  return 0;
}

}  // namespace orchestrate::cli

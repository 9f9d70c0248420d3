// `orchestrate runs` and `orchestrate report`: read-only queries over the run store.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "analysis/bottleneck_verdict.h"
#include "analysis/regressions.h"
#include "analysis/reports.h"
#include "cli/command.h"
#include "cli/options.h"
#include "cli/run_selection.h"
#include "cli/tag_argument.h"
#include "orchestrate/error.h"
#include "store/run_store.h"

namespace orchestrate::cli {

int runs_command(const std::vector<std::string>& arguments) {
  po::options_description options("runs options");
  add_db_option(options);
  options.add_options()("last,n", po::value<std::size_t>()->default_value(20),
                        "the first N runs listed (the newest, unless --sort orders them otherwise); 0 for all")(
      "limit", po::value<std::size_t>(), "internal: --last's former name, still accepted")(
      "name", po::value<std::string>()->default_value(""), "runs whose name matches this glob (*, ?, [...])")(
      "status", po::value<std::string>()->default_value(""), "running, finished, failed, interrupted or lost")(
      "recipe", po::value<std::string>()->default_value(""),
      "runs of this recipe file: its path as given to orchestrate run, or the end of it (a glob)")(
      "since", po::value<std::string>()->default_value(""),
      "runs started since a UTC date or time (2026-11-22, 2026-11-22T14:30) or an age (30m, 12h, 7d)")(
      "tag", po::value<std::vector<std::string>>()->composing(),
      "runs tagged key=value (orchestrate run --tag); repeatable: all must match")(
      "sort", po::value<std::string>()->default_value(""),
      "id (newest first, the default), started, duration, name, status, or a final metric such as eval/top1 "
      "(highest first)")(
      "reverse", po::bool_switch(), "turn the order round (e.g. lowest train/loss first)")(
      "format", po::value<std::string>()->default_value("table"), "table, csv, json or markdown");
  po::variables_map values;
  if (!parse_options("runs", "[options]", options, {}, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  RunFilter filter;
  filter.limit = values.count("limit") ? values["limit"].as<std::size_t>() : values["last"].as<std::size_t>();
  filter.name_glob = values["name"].as<std::string>();
  filter.status = values["status"].as<std::string>();
  filter.recipe = values["recipe"].as<std::string>();
  filter.since = values["since"].as<std::string>();
  if (values.count("tag")) filter.tags = parse_tags(values["tag"].as<std::vector<std::string>>());
  filter.sort_by = values["sort"].as<std::string>();
  filter.reverse = values["reverse"].as<bool>();

  const RunStore store = open_existing_store(values);
  const auto runs = store.find_runs(filter);
  std::vector<std::string> sort_metric;
  if (!runs.empty() && runs.front().final_metrics.count(filter.sort_by)) sort_metric.push_back(filter.sort_by);
  std::cout << render(runs_table(runs, sort_metric), format);
  return 0;
}

namespace {

// Every run, or those --name and --last select, each against the earlier
// runs of its recipe on its machine (regressions.h). Exit code 4 when one
// is flagged, so a CI job can fail on it.
int regressions_report(const po::variables_map& values, const RunSelection& selection, TableFormat format) {
  const double threshold = values["threshold"].as<double>();
  if (!(threshold >= 0 && threshold < 100))
    throw UsageError("report regressions: --threshold " + fixed(threshold, 2) + " is not a percentage in [0, 100)");
  const RunStore store = open_existing_store(values);
  std::vector<RunSummary> runs;
  if (selection.ids.empty() && !selection.last && !selection.name_glob) {
    RunFilter everything;
    runs = store.find_runs(everything);
  } else {
    runs = select_runs(store, selection, "report");
  }
  const auto rows = find_regressions(store, runs, threshold / 100);
  if (rows.empty() && format == TableFormat::table) {
    // A table of headers alone had told a person nothing; programs (csv,
    // json) still get the empty table their parser expects.
    std::cout << "nothing to compare: none of the " << runs.size() << " run" << (runs.size() == 1 ? "" : "s")
              << " selected has an earlier run of the same recipe on the same machine, device and world size "
                 "(train a recipe again, then report regressions)\n";
    return 0;
  }
  std::cout << render(regressions_table(rows), format);
  const auto flagged = std::count_if(rows.begin(), rows.end(), [](const auto& row) { return row.flagged; });
  if (flagged == 0) return 0;
  std::cerr << "orchestrate: report regressions: " << flagged << " run" << (flagged == 1 ? "" : "s")
            << " slower than the earlier runs of the same recipe by more than " << fixed(threshold, 1)
            << " % and than their spread\n";
  return static_cast<int>(ExitCode::regression);
}

}  // namespace

namespace {

// What every report takes: the runs (positional, --last, --name), --format
// and the store; `options` adds the report's own. False after --help.
bool parse_report_options(const std::string& report, const char* default_runs, const std::string& usage,
                          po::options_description& options, const std::vector<std::string>& arguments,
                          po::variables_map& values) {
  options.add_options()("runs", po::value<std::vector<std::string>>()->multitoken(),
                        (std::string("run ids or names; default: ") + default_runs).c_str())(
      "format", po::value<std::string>()->default_value("table"), "table, csv, json or markdown");
  add_run_selection_options(options);
  add_db_option(options);
  po::positional_options_description positional;
  positional.add("runs", -1);
  return parse_options("report " + report, usage, options, positional, arguments, values);
}

}  // namespace

int report_throughput_command(const std::vector<std::string>& arguments) {
  po::options_description options("report throughput options");
  options.add_options()(
      "baseline", po::value<std::string>(),
      "a run to compare with: scaling_efficiency = images/s / (its images/s x workers / its workers)")(
      "per-rank", po::bool_switch(), "also a row for each rank 1.. of a data-parallel run (their own steps)")(
      "wide", po::bool_switch(),
      "every column in a table: also warm-up, p5/p95, the step's other shares, setup/train/eval seconds and the "
      "FLOPs behind mfu_percent (CSV and JSON always have them)");
  po::variables_map values;
  if (!parse_report_options("throughput", "the newest run", "[RUN...|--last N|--name GLOB] [--baseline RUN] [options]",
                            options, arguments, values))
    return 0;
  const RunSelection selection = run_selection(values, "runs", "report");
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  const RunStore store = open_existing_store(values);
  const std::vector<RunSummary> runs = select_runs(store, selection, "report");
  std::vector<ThroughputRow> rows;
  const bool per_rank = values["per-rank"].as<bool>();
  for (const auto& run : runs) {
    auto ranks = throughput_by_rank(store, run);
    rows.insert(rows.end(), ranks.begin(), per_rank ? ranks.end() : ranks.begin() + 1);
  }
  if (values.count("baseline")) {
    const ThroughputRow baseline = throughput_of(store, find_run_or_throw(store, values["baseline"].as<std::string>()));
    if (baseline.images_per_s <= 0) throw UsageError("report: the baseline run has no measured steps");
    for (auto& row : rows)
      if (row.rank == "job") row.scaling_efficiency = scaling_efficiency(row, baseline);
  }
  // The verdict: what limits each run and the recipe change for it
  // (bottleneck_verdict.h); rank rows get none, but name a straggler.
  std::vector<Verdict> verdicts;
  std::map<std::int64_t, Straggler> stragglers;
  std::map<std::int64_t, std::vector<ThroughputRow>> by_run;
  for (const auto& row : rows) {
    const RunSummary& run = *std::find_if(runs.begin(), runs.end(), [&](const auto& r) { return r.id == row.run_id; });
    verdicts.push_back(row.rank == "job" ? bottleneck_verdict(row, run_facts(store, run)) : Verdict{});
    by_run[row.run_id].push_back(row);
  }
  if (per_rank)
    for (const auto& [id, ranks] : by_run)
      if (auto straggler = find_straggler(ranks)) stragglers.emplace(id, *straggler);
  Table table = throughput_table(rows);
  if (!values["wide"].as<bool>()) hide_throughput_details(table);
  const bool for_people = format == TableFormat::table || format == TableFormat::markdown;
  add_verdict_columns(table, rows, verdicts);
  table.headers.push_back("straggler");
  table.hidden_for_people.insert("straggler");  // people read it under the table
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto it = stragglers.find(rows[i].run_id);
    table.rows[i].push_back(rows[i].rank == "job" && it != stragglers.end()
                                ? text_cell(it->second.rank == "job" ? "0" : it->second.rank)
                                : Cell());
  }
  std::cout << render(table, format);
  if (for_people) std::cout << verdict_text(rows, verdicts, stragglers);
  return 0;
}

int report_regressions_command(const std::vector<std::string>& arguments) {
  po::options_description options("report regressions options");
  options.add_options()("threshold", po::value<double>()->default_value(5.0),
                        "flag a run whose median images/s fell more than this many percent below the earlier runs' "
                        "(and more than their step-to-step spread)");
  po::variables_map values;
  if (!parse_report_options("regressions", "every run", "[--name GLOB] [--threshold PERCENT] [options]", options,
                            arguments, values))
    return 0;
  return regressions_report(values, run_selection(values, "runs", "report"),
                            parse_table_format(values["format"].as<std::string>()));
}

}  // namespace orchestrate::cli

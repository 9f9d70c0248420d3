// `orchestrate compare A B [C...]`: runs side by side, read-only.
#include <iostream>

#include "analysis/run_comparison.h"
#include "cli/command.h"
#include "cli/options.h"
#include "orchestrate/error.h"
#include "store/run_store.h"

namespace orchestrate::cli {

int compare_command(const std::vector<std::string>& arguments) {
  po::options_description options("compare options");
  options.add_options()("runs", po::value<std::vector<std::string>>()->multitoken(),
                        "two or more run ids or names (a name: its newest run)")(
      "all", po::bool_switch(), "every metric, the equal ones too (by default only those that differ)")(
      "format", po::value<std::string>()->default_value("table"), "table, csv, json or markdown");
  add_db_option(options);
  po::positional_options_description positional;
  positional.add("runs", -1);
  po::variables_map values;
  if (!parse_options("compare", "RUN RUN [RUN]... [options]", options, positional, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  const auto ids = values.count("runs") ? values["runs"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (ids.size() < 2) throw UsageError("compare: give two runs or more (ids or names; see orchestrate runs)");

  const RunStore store = open_existing_store(values);
  std::vector<ComparedRun> runs;
  for (const std::string& id : ids) {
    const RunSummary run = find_run_or_throw(store, id);
    runs.push_back({store.run_details(run), throughput_of(store, run)});
  }
  std::cout << render(comparison_table(runs, values["all"].as<bool>()), format);
  return 0;
}

}  // namespace orchestrate::cli

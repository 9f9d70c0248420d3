// `orchestrate show RUN`: everything recorded about one run, read-only.
#include <iostream>

#include "analysis/run_details_report.h"
#include "cli/command.h"
#include "cli/options.h"
#include "orchestrate/error.h"
#include "store/run_store.h"

namespace orchestrate::cli {

int show_command(const std::vector<std::string>& arguments) {
  po::options_description options("show options");
  options.add_options()("run", po::value<std::string>()->required(), "run id or name (a name: its newest run)")(
      "format", po::value<std::string>()->default_value("table"), "table, json or markdown");
  add_db_option(options);
  po::positional_options_description positional;
  positional.add("run", 1);
  po::variables_map values;
  if (!parse_options("show", "RUN [options]", options, positional, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  if (format == TableFormat::csv) throw UsageError("show: --format csv holds one table and show prints several; use table, json or markdown");

  const RunStore store = open_existing_store(values);
  const RunSummary run = find_run_or_throw(store, values["run"].as<std::string>());
  std::cout << render_sections(run_details_sections(store.run_details(run), store.events(run.id)), format);
  return 0;
}

}  // namespace orchestrate::cli

// Which runs a query over several runs reads (report throughput, plot,
// export tensorboard): runs by id or name, the newest N (--last), or those
// whose name matches a glob (--name); with none of these, the newest run.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cli/options.h"
#include "store/run_store.h"

namespace orchestrate::cli {

struct RunSelection {
  std::vector<std::string> ids;  // ids or names, in the order given
  std::optional<std::size_t> last;
  std::optional<std::string> name_glob;
};

// --last and --name (the runs themselves are each command's positionals).
void add_run_selection_options(po::options_description& options);

// The selection of `ids` (the command's run positionals), --last and
// --name; giving more than one of those is a UsageError of `command`.
RunSelection run_selection(const po::variables_map& values, std::vector<std::string> ids, const std::string& command);
// The same with the ids of option `ids_option` (none if it was not given).
RunSelection run_selection(const po::variables_map& values, const std::string& ids_option, const std::string& command);

// The runs selected, oldest first (ids: in the order given). A run that is
// not there, or a selection that matches none, is a UsageError of `command`.
std::vector<RunSummary> select_runs(const RunStore& store, const RunSelection& selection, const std::string& command);

}  // namespace orchestrate::cli

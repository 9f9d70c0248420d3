#include "cli/run_selection.h"
#include "store/run_store.h"

#include <algorithm>
#include <utility>

#include "orchestrate/error.h"

namespace orchestrate::cli {

void add_run_selection_options(po::options_description& options) {
  options.add_options()("last", po::value<std::size_t>(), "the newest N runs")("name", po::value<std::string>(),
                                                                               "the runs whose name matches this glob");
}

RunSelection run_selection(const po::variables_map& values, std::vector<std::string> ids, const std::string& command) {
  if (!ids.empty() + values.count("last") + values.count("name") > 1)
    throw UsageError(command + ": give runs, --last or --name, not several");
  RunSelection selection;
  selection.ids = std::move(ids);
  if (values.count("last")) selection.last = values["last"].as<std::size_t>();
  if (values.count("name")) selection.name_glob = values["name"].as<std::string>();
  return selection;
}

RunSelection run_selection(const po::variables_map& values, const std::string& ids_option, const std::string& command) {
  return run_selection(
      values, values.count(ids_option) ? values[ids_option].as<std::vector<std::string>>() : std::vector<std::string>{},
      command);
}

std::vector<RunSummary> select_runs(const RunStore& store, const RunSelection& selection, const std::string& command) {
  std::vector<RunSummary> runs;
  if (!selection.ids.empty()) {
    for (const auto& id : selection.ids) runs.push_back(find_run_or_throw(store, id));
  } else if (selection.last || selection.name_glob) {
    RunFilter filter;
    if (selection.last) filter.limit = *selection.last;
    if (selection.name_glob) filter.name_glob = *selection.name_glob;
    runs = store.find_runs(filter);
    std::reverse(runs.begin(), runs.end());  // oldest first, like runs given by id
    if (runs.empty()) throw UsageError(command + ": no run matches in " + store.path());
  } else {
    runs = store.list_runs(1);
    if (runs.empty()) throw UsageError(command + ": " + store.path() + " holds no runs yet");
  }
  return runs;
}

}  // namespace orchestrate::cli

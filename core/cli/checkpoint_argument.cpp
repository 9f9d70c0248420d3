#include "checkpoint_argument.h"

#include <filesystem>

#include "checkpoint.h"
#include "orchestrate/error.h"
#include "resume.h"

namespace orchestrate::cli {

RunSummary find_run_or_throw(const RunStore& store, const std::string& id) {
  auto run = store.find_run(id);
  if (!run) throw UsageError("no run '" + id + "' in " + store.path() + "; `orchestrate runs` lists the runs");
  return *run;
}

std::string checkpoint_of(const std::string& source, const po::variables_map& values) {
  if (is_checkpoint(source) || std::filesystem::is_regular_file(source)) return source;
  const RunStore store = open_existing_store(values);
  const RunSummary run = find_run_or_throw(store, source);
  const std::string newest = newest_checkpoint_of(store, run.id);
  if (newest.empty()) throw UsageError("run " + std::to_string(run.id) + " has no checkpoint on disk");
  return newest;
}

}  // namespace orchestrate::cli

#include "cli/checkpoint_argument.h"
#include "store/run_store.h"

#include <filesystem>

#include "checkpoint/checkpoint.h"
#include "checkpoint/resume.h"
#include "orchestrate/error.h"

namespace orchestrate::cli {

std::string checkpoint_of(const std::string& source, const po::variables_map& values) {
  if (is_checkpoint(source) || std::filesystem::is_regular_file(source)) return source;
  const RunStore store = open_existing_store(values);
  const RunSummary run = find_run_or_throw(store, source);
  const std::string newest = newest_checkpoint_of(store, run.id);
  if (newest.empty()) throw UsageError("run " + std::to_string(run.id) + " has no checkpoint on disk");
  return newest;
}

}  // namespace orchestrate::cli

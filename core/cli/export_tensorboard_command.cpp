// `orchestrate export tensorboard RUN... DIR`: recorded runs as TensorBoard
// event files, one sub-directory per run, read-only on the store.
#include "export_tensorboard_command.h"

#include <iostream>

#include "metric_history.h"
#include "options.h"
#include "orchestrate/error.h"
#include "run_selection.h"
#include "run_store.h"
#include "tensorboard_export.h"

namespace orchestrate::cli {

int export_tensorboard_command(const std::vector<std::string>& arguments) {
  po::options_description options("export tensorboard options");
  options.add_options()("paths", po::value<std::vector<std::string>>()->multitoken(),
                        "run ids or names, then the directory to write (made if missing)");
  add_run_selection_options(options);
  add_db_option(options);
  po::positional_options_description positional;
  positional.add("paths", -1);
  po::variables_map values;
  if (!parse_options("export tensorboard", "[RUN...|--last N|--name GLOB] DIR [options]", options, positional,
                     arguments, values))
    return 0;
  // The directory is the last positional; the runs, if any, come before it.
  std::vector<std::string> paths =
      values.count("paths") ? values["paths"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (paths.empty())
    throw UsageError("export tensorboard: give the directory to write, e.g. orchestrate export tensorboard 3 4 tb/");
  const std::string directory = paths.back();
  paths.pop_back();
  const RunSelection selection = run_selection(values, paths, "export tensorboard");

  const RunStore store = open_existing_store(values);
  for (const RunSummary& run : select_runs(store, selection, "export tensorboard")) {
    const auto exported = tensorboard::export_run(run, read_metric_history(store.path(), run.id), directory);
    std::cout << "run " << run.id << " (" << run.name << "): " << exported.scalars << " scalars in "
              << exported.event_file << "\n";
  }
  std::cout << "view them with: tensorboard --logdir " << directory << "\n";
  return 0;
}

}  // namespace orchestrate::cli

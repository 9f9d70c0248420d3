// `orchestrate export tensorboard|mlflow [RUN...|--last N|--name GLOB] DIR`:
// recorded runs as TensorBoard event files (one sub-directory per run) or in
// MLflow's file-store layout, read-only on the store, in the front end.
// `export mlflow --sweep ID DIR`: a sweep as a parent run, its trials its children.
#include "cli/export_tensorboard_command.h"

#include <functional>
#include <set>
#include <iostream>

#include "cli/options.h"
#include "cli/run_selection.h"
#include "export/mlflow/mlflow_export.h"
#include "export/tensorboard/tensorboard_export.h"
#include "orchestrate/error.h"
#include "store/metric_history.h"
#include "store/run_store.h"

namespace orchestrate::cli {
namespace {

// Run ids an export adds to those given (a sweep's trials), once the store is open.
using MoreRuns =
    std::function<std::vector<std::string>(const RunStore&, const po::variables_map&, const std::string& directory)>;

// What the two exports share: the runs, then the directory, and one line per run.
int export_runs(const std::string& command, const std::vector<std::string>& arguments,
                po::options_description& options,
                const std::function<std::string(const RunStore&, const RunSummary&, const std::string& directory,
                                                const po::variables_map&)>& export_one,
                const std::function<std::string(const std::string& directory)>& how_to_view,
                const MoreRuns& more_runs = {}) {
  options.add_options()("paths", po::value<std::vector<std::string>>()->multitoken(),
                        "run ids or names, then the directory to write (made if missing)");
  add_run_selection_options(options);
  add_db_option(options);
  po::positional_options_description positional;
  positional.add("paths", -1);
  po::variables_map values;
  if (!parse_options(command, "[RUN...|--last N|--name GLOB] DIR [options]", options, positional, arguments, values))
    return 0;
  // The directory is the last positional; the runs, if any, come before it.
  std::vector<std::string> paths =
      values.count("paths") ? values["paths"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (paths.empty()) throw UsageError(command + ": give the directory to write, e.g. orchestrate " + command + " 3 4 out/");
  const std::string directory = paths.back();
  paths.pop_back();
  const RunStore store = open_existing_store(values);
  if (more_runs)
    for (const std::string& id : more_runs(store, values, directory)) paths.push_back(id);
  const RunSelection selection = run_selection(values, paths, command);
  for (const RunSummary& run : select_runs(store, selection, command))
    std::cout << "run " << run.id << " (" << run.name << "): " << export_one(store, run, directory, values) << "\n";
  std::cout << how_to_view(directory) << "\n";
  return 0;
}

}  // namespace

int export_tensorboard_command(const std::vector<std::string>& arguments) {
  po::options_description options("export tensorboard options");
  return export_runs(
      "export tensorboard", arguments, options,
      [](const RunStore& store, const RunSummary& run, const std::string& directory, const po::variables_map&) {
        const auto exported = tensorboard::export_run(run, read_metric_history(store.path(), run.id),
                                                      store.step_timings(run.id), store.run_details(run).record.params,
                                                      directory);
        return std::to_string(exported.scalars) + " scalars in " + exported.event_file;
      },
      [](const std::string& directory) { return "view them with: tensorboard --logdir " + directory; });
}

int export_mlflow_command(const std::vector<std::string>& arguments) {
  po::options_description options("export mlflow options");
  options.add_options()("experiment", po::value<std::string>()->default_value("orchestrate"),
                        "the MLflow experiment the runs go into (made if missing)")(
      "sweep", po::value<std::string>(),
      "a sweep (id or name): one MLflow run for it, with its trials' runs as its child runs (MLflow's nested runs)");
  std::string parent_run_id;  // the sweep's MLflow run, with --sweep
  std::set<std::int64_t> trial_runs;
  return export_runs(
      "export mlflow", arguments, options,
      [&](const RunStore& store, const RunSummary& run, const std::string& directory, const po::variables_map& values) {
        const std::string experiment = values["experiment"].as<std::string>();
        mlflow::write_experiment(directory, experiment);
        const auto exported =
            mlflow::export_run(store.run_details(run), read_metric_history(store.path(), run.id), directory, experiment,
                               trial_runs.count(run.id) ? parent_run_id : "");
        return "MLflow run " + exported.run_id + " (" + std::to_string(exported.params) + " params, " +
               std::to_string(exported.metric_values) + " metric values, " + std::to_string(exported.tags) +
               " tags) in " + exported.directory;
      },
      [](const std::string& directory) {
        return "view them with: MLFLOW_ALLOW_FILE_STORE=true mlflow ui --backend-store-uri " + directory +
               "\nor move them into MLflow's database: mlflow migrate-filestore --source " + directory +
               " --target sqlite:///mlflow.db";
      },
      [&](const RunStore& store, const po::variables_map& values, const std::string& directory) {
        std::vector<std::string> ids;
        if (!values.count("sweep")) return ids;
        const std::string wanted = values["sweep"].as<std::string>();
        const auto sweep = store.find_sweep(wanted);
        if (!sweep)
          throw UsageError("export mlflow: no sweep '" + wanted + "' in " + store.path() +
                           " (orchestrate sweeps lists them)");
        for (const SweepTrialRecord& trial : sweep->trials)
          if (trial.run_id && trial_runs.insert(trial.run_id).second) ids.push_back(std::to_string(trial.run_id));
        if (ids.empty())
          throw UsageError("export mlflow: sweep " + std::to_string(sweep->sweep.id) + " has no trial with a run yet");
        const std::string experiment = values["experiment"].as<std::string>();
        mlflow::write_experiment(directory, experiment);
        const auto parent = mlflow::export_sweep(*sweep, directory, experiment);
        parent_run_id = parent.run_id;
        std::cout << "sweep " << sweep->sweep.id << " (" << sweep->sweep.name << "): MLflow run " << parent.run_id
                  << ", the parent of its " << ids.size() << " trial runs, in " << parent.directory << "\n";
        return ids;
      });
}

}  // namespace orchestrate::cli

// `orchestrate export mlflow`: recorded runs in MLflow's file-store layout,
// which `mlflow ui --backend-store-uri DIR` (with MLFLOW_ALLOW_FILE_STORE=true
// since MLflow 3) reads, and `mlflow migrate-filestore --source DIR` moves
// into MLflow's SQLite store:
//
//   DIR/<experiment id>/meta.yaml                 the experiment (--experiment NAME)
//   DIR/<experiment id>/<run id>/meta.yaml        the run: name, status, start and end
//   DIR/<experiment id>/<run id>/params/<key>     the resolved recipe, flattened (optimizer.lr)
//   DIR/<experiment id>/<run id>/metrics/<name>   "<ms since 1970> <value> <step>" per recorded value
//   DIR/<experiment id>/<run id>/tags/<key>       the run's tags, mlflow.* and orchestrate.*
//   DIR/<experiment id>/<run id>/artifacts/recipe.toml
//
// A sweep (`export mlflow --sweep ID`) is a parent run, its trials children.
//
// Ids are derived from the experiment's name and the run's identity, so
// exporting a run again replaces its directory instead of adding a copy.
#pragma once

#include <cstddef>
#include <string>

#include "store/metric_history.h"
#include "store/run_records.h"
#include "store/sweep_records.h"

namespace orchestrate::mlflow {

struct ExportedRun {
  std::string run_id;     // MLflow's: 32 hex digits
  std::string directory;  // DIR/<experiment id>/<run id>
  std::size_t metric_values = 0, params = 0, tags = 0;
};

// MLflow's id of the experiment named `name`: digits, as MLflow's own (its
// SQL store keeps experiment ids as integers).
std::string experiment_id(const std::string& name);

// Writes the experiment's meta.yaml under `directory` if it is not there yet
// (and MLflow's Default experiment 0, which its file store expects).
void write_experiment(const std::string& directory, const std::string& name);

// Writes one run (its directory replaced) into experiment `experiment_name`;
// with `parent_run_id`, as a child of that run (MLflow's mlflow.parentRunId
// tag: a sweep's trial under its sweep).
ExportedRun export_run(const RunDetails& details, const MetricHistory& history, const std::string& directory,
                       const std::string& experiment_name, const std::string& parent_run_id = "");

// Writes a sweep as a parent run (its directory replaced): its name, state
// and times; params sweep.recipe, sweep.metric, sweep.mode, sweep.scheduler
// and sweep.trials; the best trial's value as its metric; its spec as the
// note and as artifacts/sweep.toml. Its trials go under it with export_run's
// `parent_run_id` = the returned run_id.
ExportedRun export_sweep(const SweepDetails& sweep, const std::string& directory, const std::string& experiment_name);

}  // namespace orchestrate::mlflow

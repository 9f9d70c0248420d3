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
// Ids are derived from the experiment's name and the run's identity, so
// exporting a run again replaces its directory instead of adding a copy.
#pragma once

#include <cstddef>
#include <string>

#include "store/metric_history.h"
#include "store/run_records.h"

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

// Writes one run (its directory replaced) into experiment `experiment_name`.
ExportedRun export_run(const RunDetails& details, const MetricHistory& history, const std::string& directory,
                       const std::string& experiment_name);

}  // namespace orchestrate::mlflow

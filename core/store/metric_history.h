// Every value a run recorded of each metric, in step order: the curves that
// `orchestrate plot` draws and `orchestrate export tensorboard` writes.
// RunSummary keeps only each metric's last value.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace orchestrate {

struct MetricPoint {
  std::int64_t step = 0, epoch = 0;
  double value = 0;                // NaN where a NaN was recorded
  double wall_time = 0;            // when it was recorded: seconds since 1970-01-01 UTC (what TensorBoard wants)
  double seconds_since_start = 0;  // when it was recorded, counted from the run's start
};

// By metric name; each series ordered by step, then in the order recorded.
using MetricHistory = std::map<std::string, std::vector<MetricPoint>>;

// Run `run_id`'s metrics from the run store file `db_path`, opened read-only
// (open_database_for_reading: never created, migrated or written). An
// unknown run has no metrics. `only`: that metric alone ("": every one).
// Throws Error naming the file.
MetricHistory read_metric_history(const std::string& db_path, std::int64_t run_id, const std::string& only = "");

}  // namespace orchestrate

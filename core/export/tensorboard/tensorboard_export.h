// `orchestrate export tensorboard`: a run's recorded metrics as TensorBoard
// scalars, so `tensorboard --logdir DIR` shows the runs' curves side by side.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "store/metric_history.h"
#include "store/run_store.h"

namespace orchestrate::tensorboard {

// "<id>-<name>" ("3-slow_lr"), with any character but letters, digits and
// ".-_" as '_': one directory per run, which TensorBoard lists as the run.
std::string run_directory_name(const RunSummary& run);

struct ExportedRun {
  std::string event_file;  // the file written
  std::size_t scalars = 0;
};

// Writes `history` (every value of every metric, at its step and with the
// wall time it was recorded) and, from `rows` (the job's step rows, by step),
// the learning rate, images/s and phase shares at each log point, as a live
// file has them (live_run_events.h), and `params` (the resolved recipe,
// flattened) as hparams, into one event file in `directory`/run_directory_name(run),
// made if missing. The file's name comes from the run (its first record's
// time and its host), so exporting a run again replaces its file rather
// than adding a second one that TensorBoard would read twice.
ExportedRun export_run(const RunSummary& run, const MetricHistory& history, const std::vector<StepTiming>& rows,
                       const std::vector<std::pair<std::string, std::string>>& params, const std::string& directory);

}  // namespace orchestrate::tensorboard

// `orchestrate bench-input RECIPE`: the training input alone, as a run would
// feed it (the same dataset, train preprocessing, epoch plan, shuffle
// buffer, worker threads, prefetch and copy to the device, and finish_batch
// there), with no model, so its throughput can be set against other loaders
// (scripts/bench/input_pipeline.py, scripts/bench/pipeline_threads.py).
// Nothing is recorded in the run store: there is no training to record.
#pragma once

#include <cstdint>
#include <string>

#include "engine/recipe/recipe.h"
#include "orchestrate/registry.h"

namespace orchestrate {

struct InputMeasurement {
  std::int64_t batches = 0;  // served, the first included
  std::int64_t images = 0;   // after the first batch
  double setup_s = 0;        // building the dataset and preprocessing (indexing, checking files)
  double first_batch_s = 0;  // from the pipeline's start to its first batch: what a run waits before its first step
  double seconds = 0;        // from the first batch to the last
  double images_per_s = 0;   // images / seconds: the steady rate, the threads already started
  int workers = 0, prefetch = 0;
  std::string device;
};

// `batches` batches, the first included (at least 2, so there is a rate after
// the first); 0: as many as the recipe's training would take ([run]
// max_steps, or epochs).
InputMeasurement measure_input(const Recipe& recipe, const Registry& registry, std::int64_t batches = 0);

}  // namespace orchestrate

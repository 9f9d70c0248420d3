// `report regressions`: each run against the earlier runs of the same recipe
// content on the same host, device and world size, flagged when its median
// images/s fell by more than a threshold and by more than the runs' own
// step-to-step spread, so that noise alone does not raise an alarm. The phase
// whose seconds per image grew most is named: where to look.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/table_format.h"
#include "engine/recipe/core_defaults.h"
#include "store/run_store.h"

namespace orchestrate {

struct RegressionRow {
  std::int64_t run_id = 0;
  std::string name;
  std::int64_t baseline_runs = 0;     // earlier runs of the same recipe content, host, device and world size
  double baseline_images_per_s = 0;   // the median of their median images/s
  double images_per_s = 0;            // this run's median images/s (of its steps' own)
  double change = 0;                  // images_per_s / baseline_images_per_s - 1
  // Half the p5-p95 width of the steps' images/s, this run's or the
  // baseline runs' median one, whichever is larger, over the baseline.
  double noise = 0;
  bool flagged = false;  // change < -threshold and -change > noise
  std::string grown_phase;      // data_wait, compute, sync, optimizer or other: its s/image grew most
  double grown_ms_per_image = 0;  // by how much, against the baseline runs' median
};

// The key runs are compared under: every resolved-recipe value but the run's
// name, a core key the run did not record at its spec's default (a run from
// before the key existed ran with it), then host, device and world size.
// Runs with the same key ran the same training on the same machine.
std::string comparison_key(const RunDetails& details, const CoreDefaults& defaults = CoreDefaults::builtin());

// Every run of `runs` (finished training runs with measured steps; others are
// skipped) that has an earlier one with its key, oldest first.
// `threshold` is a fraction: 0.05 flags a drop of more than 5 %.
std::vector<RegressionRow> find_regressions(const RunStore& store, const std::vector<RunSummary>& runs,
                                            double threshold, const CoreDefaults& defaults = CoreDefaults::builtin());

// id, name, baseline_runs, baseline_images_per_s, images_per_s, change,
// noise, flagged, grown_phase, grown_ms_per_image.
Table regressions_table(const std::vector<RegressionRow>& rows);

}  // namespace orchestrate

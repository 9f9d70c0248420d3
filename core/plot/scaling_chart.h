// `orchestrate plot --scaling`: the TF Estimator seed's chart. Steady-state
// images/s (the median step's, as `report throughput` computes it) against
// the number of workers, beside the ideal: the smallest run's images/s
// growing in proportion to workers.
#pragma once

#include <vector>

#include "analysis/reports.h"
#include "plot/chart.h"

namespace orchestrate::plot {

// One point per run, joined in order of workers, each marked with its
// scaling efficiency (images/s against the ideal); the ideal line from the
// run with the fewest workers (the first such, if several) across the
// measured worker counts. Rows are the job rows of report throughput. A run
// without measured steps is a UsageError naming it.
Chart scaling_chart(const std::vector<ThroughputRow>& rows);

}  // namespace orchestrate::plot

// `orchestrate sweep show SWEEP --plot FILE`: the sweep's metric against each
// parameter it varied, one panel a parameter, one point a trial. Trials run
// to their end are one colour; those the scheduler stopped, at the value of
// their last rung, another; the best trial is named. A numeric parameter
// spanning a factor of 10 or more (a learning rate) gets a log axis; words
// ("none", "linear") sit at evenly spaced places, in the order first seen.
#pragma once

#include "plot/chart.h"
#include "store/sweep_records.h"

namespace orchestrate::plot {

// A sweep with no trial that has a value, or that varies no parameter, is a
// UsageError saying so.
Chart sweep_chart(const SweepDetails& sweep);

}  // namespace orchestrate::plot

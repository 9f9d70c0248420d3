// `orchestrate plot`'s chart: the curves of several runs, one panel per
// metric, each run one colour across every panel and named by what differs
// in its recipe (run_labels.h).
#pragma once

#include <string>
#include <vector>

#include "chart.h"
#include "metric_history.h"
#include "run_store.h"

namespace orchestrate::plot {

// What the curves are drawn against.
enum class XAxis {
  step,   // optimizer updates (the store's step)
  epoch,  // passes over the data, fractional: step / steps per epoch
  time,   // seconds since the run started
};
// "step", "epoch" or "time"; anything else is a UsageError listing them.
XAxis parse_x_axis(const std::string& name);

// Not a stored metric: images/s of each step, from the step timings (reports.h images_per_s).
inline constexpr const char* kImagesPerSecond = "images_per_s";

// Everything about one run a chart of curves reads.
struct ChartedRun {
  RunDetails details;
  std::vector<StepTiming> steps;  // the job's (rank 0's)
  MetricHistory metrics;
};

// One panel per metric, in the order given; a curve per run that recorded
// it. A metric no run recorded is a UsageError naming the metrics they have.
Chart run_curves_chart(const std::vector<ChartedRun>& runs, const std::vector<std::string>& metrics, XAxis x_axis);

}  // namespace orchestrate::plot

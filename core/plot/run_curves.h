// `orchestrate plot`'s chart: the curves of several runs, one panel per
// metric, each run one colour across every panel and named by what differs
// in its recipe (run_labels.h).
#pragma once

#include <string>
#include <vector>

#include "plot/chart.h"
#include "store/metric_history.h"
#include "store/run_store.h"

namespace orchestrate::plot {

// What the curves are drawn against.
enum class XAxis {
  step,   // optimizer updates (the store's step)
  epoch,  // passes over the data, fractional: step / steps per epoch
  time,   // seconds since the run started
};
// "step", "epoch" or "time"; anything else is a UsageError listing them.
XAxis parse_x_axis(const std::string& name);

// Not stored metrics, but series of the step timings: images/s of each step
// (reports.h images_per_s), and the share of step time each phase took
// (report throughput's data_wait_share, compute_share, sync_share and
// optimizer_share), to see warm-up, slowdowns and stalls over a run.
inline constexpr const char* kImagesPerSecond = "images_per_s";
inline constexpr const char* kStepSeries[] = {kImagesPerSecond, "data_wait_share", "compute_share", "sync_share",
                                              "optimizer_share"};
bool is_step_series(const std::string& metric);

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

#include "plot/run_curves.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/reports.h"
#include "orchestrate/error.h"
#include "plot/run_labels.h"

namespace orchestrate::plot {
namespace {

// Where a run's steps and metric points sit on the x axis.
class XPlacement {
 public:
  XPlacement(const ChartedRun& run, XAxis axis) : axis_(axis) {
    std::map<std::int64_t, std::int64_t> steps_in_epoch;
    for (const StepTiming& step : run.steps)
      steps_per_epoch_ = std::max(steps_per_epoch_, ++steps_in_epoch[step.epoch]);
    // A step's total_s runs from the end of the step before, so setup plus
    // the sum of steps so far is when it ended (evaluations aside).
    const auto setup = run.details.summary.final_metrics.find("time/setup_s");
    double clock = setup == run.details.summary.final_metrics.end() ? 0.0 : setup->second;
    for (const StepTiming& step : run.steps) step_end_s_.push_back(clock += step.total_s);
  }

  double of_step(std::size_t index, const StepTiming& step) const {
    switch (axis_) {
      case XAxis::step: return static_cast<double>(step.step);
      case XAxis::epoch: return fractional_epoch(step.step, step.epoch);
      case XAxis::time: return step_end_s_[index];
    }
    return 0;
  }

  double of_metric(const MetricPoint& point) const {
    switch (axis_) {
      case XAxis::step: return static_cast<double>(point.step);
      case XAxis::epoch: return fractional_epoch(point.step, point.epoch);
      case XAxis::time: return point.seconds_since_start;
    }
    return 0;
  }

 private:
  // Steps are counted from 1 and every epoch but a cut-short last one has
  // the same number, so step / steps per epoch is the epoch reached: 1.0 at
  // the end of the first. A run without step timings has whole epochs only.
  double fractional_epoch(std::int64_t step, std::int64_t epoch) const {
    if (steps_per_epoch_ == 0) return static_cast<double>(epoch);
    return static_cast<double>(step) / static_cast<double>(steps_per_epoch_);
  }

  XAxis axis_;
  std::int64_t steps_per_epoch_ = 0;
  std::vector<double> step_end_s_;
};

std::string x_label(XAxis axis) {
  switch (axis) {
    case XAxis::step: return "step (optimizer updates)";
    case XAxis::epoch: return "epoch";
    case XAxis::time: return "time since the run started (s)";
  }
  return "";
}

// The y axis of a metric, with its unit where the name tells it.
std::string y_label(const std::string& metric, std::size_t images_per_s_window) {
  const std::string per = images_per_s_window == 1 ? "per step" : "per " + std::to_string(images_per_s_window) + " steps";
  if (metric == kImagesPerSecond) return "images/s (" + per + ")";
  if (is_step_series(metric)) return metric + " (of step time, " + per + ")";
  if (metric.starts_with("time/") || metric.ends_with("_s")) return metric + " (s)";
  if (metric.find("top1") != std::string::npos || metric.find("top5") != std::string::npos)
    return metric + " (fraction correct)";
  return metric;
}

// Steps per point of the images/s curve: a point per step up to
// kMostImagesPerSecondPoints steps, beyond that the steps of a window taken
// together, so a long run draws a readable line rather than a band of noise.
constexpr std::size_t kMostImagesPerSecondPoints = 60;
std::size_t images_per_s_window(const std::vector<ChartedRun>& runs) {
  std::size_t most_steps = 0;
  for (const ChartedRun& run : runs) most_steps = std::max(most_steps, run.steps.size());
  return std::max<std::size_t>(1, (most_steps + kMostImagesPerSecondPoints - 1) / kMostImagesPerSecondPoints);
}

// A step series' value over steps taken together: images over their time
// (report throughput's images/s), or a phase's time over their time.
double step_series_value(const std::string& series, const StepTiming& together) {
  if (series == kImagesPerSecond) return images_per_s(together);
  if (together.total_s <= 0) return 0;
  if (series == "data_wait_share") return together.data_wait_s / together.total_s;
  if (series == "compute_share") return together.compute_s / together.total_s;
  if (series == "sync_share") return together.sync_s / together.total_s;
  return together.optimizer_s / together.total_s;
}

// Each window's value of the series, at its last step.
Curve step_series_curve(const ChartedRun& run, const std::string& series, const XPlacement& x, std::size_t window) {
  Curve curve;
  for (std::size_t first = 0; first < run.steps.size(); first += window) {
    const std::size_t end = std::min(first + window, run.steps.size());
    StepTiming together;
    for (std::size_t i = first; i < end; ++i) {
      together.images += run.steps[i].images;
      together.total_s += run.steps[i].total_s;
      together.data_wait_s += run.steps[i].data_wait_s;
      together.compute_s += run.steps[i].compute_s;
      together.sync_s += run.steps[i].sync_s;
      together.optimizer_s += run.steps[i].optimizer_s;
    }
    const double y = step_series_value(series, together);
    // A share of 0 is a value (no sync alone); images/s of 0 is a step that took no time.
    if (together.total_s > 0 && std::isfinite(y)) curve.points.emplace_back(x.of_step(end - 1, run.steps[end - 1]), y);
  }
  return curve;
}

Curve metric_curve(const ChartedRun& run, const std::string& metric, const XPlacement& x) {
  Curve curve;
  const auto series = run.metrics.find(metric);
  if (series == run.metrics.end()) return curve;
  for (const MetricPoint& point : series->second)
    if (std::isfinite(point.value)) curve.points.emplace_back(x.of_metric(point), point.value);
  // A curve is a function of x: two values at one step (a resumed run
  // writing a step again) would draw a spike back; keep them in x order.
  std::stable_sort(curve.points.begin(), curve.points.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return curve;
}

std::string joined(const std::vector<std::string>& texts) {
  std::string text;
  for (const std::string& part : texts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

std::string recorded_metrics(const std::vector<ChartedRun>& runs) {
  std::set<std::string> names(std::begin(kStepSeries), std::end(kStepSeries));
  for (const ChartedRun& run : runs)
    for (const auto& [name, series] : run.metrics) names.insert(name);
  return joined({names.begin(), names.end()});
}

// "steady #1, bold #2"; "7 runs" where names would not fit a title.
constexpr std::size_t kMostRunsNamedInTitle = 4;
std::string run_names(const std::vector<ChartedRun>& runs) {
  if (runs.size() > kMostRunsNamedInTitle) return std::to_string(runs.size()) + " runs";
  std::vector<std::string> names;
  for (const ChartedRun& run : runs)
    names.push_back(run.details.summary.name + " #" + std::to_string(run.details.summary.id));
  return joined(names);
}

}  // namespace

bool is_step_series(const std::string& metric) {
  return std::any_of(std::begin(kStepSeries), std::end(kStepSeries),
                     [&](const char* series) { return metric == series; });
}

XAxis parse_x_axis(const std::string& name) {
  if (name == "step") return XAxis::step;
  if (name == "epoch") return XAxis::epoch;
  if (name == "time") return XAxis::time;
  throw UsageError("--x " + name + ": unknown x axis (known: step, epoch, time)");
}

Chart run_curves_chart(const std::vector<ChartedRun>& runs, const std::vector<std::string>& metrics, XAxis x_axis) {
  std::vector<RunDetails> details;
  std::vector<XPlacement> placements;
  for (const ChartedRun& run : runs) {
    details.push_back(run.details);
    placements.emplace_back(run, x_axis);
  }
  const std::vector<std::string> labels = run_labels(details);

  const std::size_t window = images_per_s_window(runs);

  Chart chart;
  chart.x_label = x_label(x_axis);
  for (const std::string& metric : metrics) {
    Panel panel;
    panel.title = metric;
    panel.y_label = y_label(metric, window);
    panel.y_from_zero = is_step_series(metric);
    panel.y_is_share = is_step_series(metric) && metric != kImagesPerSecond;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      Curve curve = is_step_series(metric) ? step_series_curve(runs[r], metric, placements[r], window)
                                           : metric_curve(runs[r], metric, placements[r]);
      if (curve.points.empty()) continue;
      curve.label = labels[r];
      curve.colour = static_cast<int>(r);
      // A metric recorded once per epoch has a few points: mark each.
      if (curve.points.size() <= 20) curve.style = CurveStyle::line_and_points;
      panel.curves.push_back(std::move(curve));
    }
    if (panel.curves.empty())
      throw UsageError("plot: no run here recorded metric '" + metric + "' (recorded: " + recorded_metrics(runs) + ")");
    chart.panels.push_back(std::move(panel));
  }
  chart.title = joined(metrics) + " of " + run_names(runs);
  return chart;
}

}  // namespace orchestrate::plot

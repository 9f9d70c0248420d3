// `orchestrate plot`: recorded runs as a picture, read-only. Curves of
// metrics (and images/s) against step, epoch or time, or with --scaling the
// seed's chart of images/s against workers; gnuplot draws them.
#include <iostream>
#include <sstream>

#include "analysis/reports.h"
#include "cli/command.h"
#include "cli/options.h"
#include "cli/run_selection.h"
#include "orchestrate/error.h"
#include "plot/gnuplot_chart.h"
#include "plot/run_curves.h"
#include "plot/scaling_chart.h"
#include "store/metric_history.h"
#include "store/run_store.h"

namespace orchestrate::cli {
namespace {

// "train/loss, eval/top1" -> {"train/loss", "eval/top1"}.
std::vector<std::string> metric_list(const std::string& text) {
  std::vector<std::string> metrics;
  std::istringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) {
    const auto first = part.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    metrics.push_back(part.substr(first, part.find_last_not_of(' ') - first + 1));
  }
  if (metrics.empty())
    throw UsageError("plot: --metric names no metric; give e.g. --metric train/loss,eval/top1,images_per_s");
  return metrics;
}

plot::Chart curves_of(const RunStore& store, const std::vector<RunSummary>& runs,
                      const std::vector<std::string>& metrics, plot::XAxis x_axis) {
  // Step rows can be millions: read them only for what needs them.
  bool need_steps = x_axis != plot::XAxis::step;
  for (const std::string& metric : metrics) need_steps = need_steps || plot::is_step_series(metric);
  std::vector<plot::ChartedRun> charted;
  for (const RunSummary& run : runs) {
    charted.push_back({store.run_details(run), need_steps ? store.step_timings(run.id) : std::vector<StepTiming>{},
                       read_metric_history(store.path(), run.id)});
  }
  return plot::run_curves_chart(charted, metrics, x_axis);
}

plot::Chart scaling_of(const RunStore& store, const std::vector<RunSummary>& runs) {
  std::vector<ThroughputRow> rows;
  for (const RunSummary& run : runs) rows.push_back(throughput_of(store, run));
  return plot::scaling_chart(rows);
}

}  // namespace

int plot_command(const std::vector<std::string>& arguments) {
  po::options_description options("plot options");
  options.add_options()("runs", po::value<std::vector<std::string>>()->multitoken(),
                        "run ids or names; default: the newest run")(
      "metric", po::value<std::string>(),
      "comma-separated metrics, one panel each (default train/loss): any recorded metric (orchestrate show "
      "lists them), or a series of the step timings: images_per_s, data_wait_share, compute_share, sync_share, optimizer_share")(
      "x", po::value<std::string>(),
      "what curves are drawn against: step (default), epoch or time (s since the run started)")(
      "scaling", po::bool_switch(),
      "instead of curves, steady-state images/s against workers, beside ideal linear scaling from the smallest run")(
      "output,o", po::value<std::string>()->required(), "the picture: FILE.svg or FILE.png");
  add_run_selection_options(options);
  add_db_option(options);
  po::positional_options_description positional;
  positional.add("runs", -1);
  po::variables_map values;
  if (!parse_options("plot",
                     "[RUN...|--last N|--name GLOB] --metric M[,M...] [--x step|epoch|time] -o FILE.svg|png\n"
                     "       orchestrate plot --scaling [RUN...|--last N|--name GLOB] -o FILE.svg|png",
                     options, positional, arguments, values))
    return 0;
  const RunSelection selection = run_selection(values, "runs", "plot");
  const std::string output = values["output"].as<std::string>();
  plot::picture_format_of(output);  // a bad extension fails before any work
  const bool scaling = values["scaling"].as<bool>();
  if (scaling && (values.count("metric") || values.count("x")))
    throw UsageError("plot: --scaling draws images/s against workers; --metric and --x are for curves, leave them out");
  const auto metrics = metric_list(values.count("metric") ? values["metric"].as<std::string>() : "train/loss");
  const plot::XAxis x_axis = plot::parse_x_axis(values.count("x") ? values["x"].as<std::string>() : "step");

  const RunStore store = open_existing_store(values);
  const std::vector<RunSummary> runs = select_runs(store, selection, "plot");
  const plot::Chart chart = scaling ? scaling_of(store, runs) : curves_of(store, runs, metrics, x_axis);
  plot::draw_chart(chart, output);
  std::cout << "wrote " << output << ": " << chart.title << "\n";
  return 0;
}

}  // namespace orchestrate::cli

#include "plot/scaling_chart.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "orchestrate/error.h"

namespace orchestrate::plot {
namespace {

// The chart shows the median step's images/s (a few slow steps do not move
// it), so its efficiencies are of that figure too.
ThroughputRow with_median_images_per_s(ThroughputRow row) {
  row.images_per_s = row.median_images_per_s;
  return row;
}

}  // namespace

Chart scaling_chart(const std::vector<ThroughputRow>& rows) {
  if (rows.empty()) throw UsageError("plot --scaling: give the runs to chart");
  for (const ThroughputRow& row : rows)
    if (row.median_images_per_s <= 0)
      throw UsageError("plot --scaling: run " + std::to_string(row.run_id) + " (" + row.name +
                       ") has no measured steps; leave it out");

  std::vector<ThroughputRow> by_workers = rows;
  std::stable_sort(by_workers.begin(), by_workers.end(),
                   [](const ThroughputRow& a, const ThroughputRow& b) { return a.workers < b.workers; });
  const ThroughputRow& base = by_workers.front();
  const double per_worker = base.median_images_per_s / std::max(1, base.workers);

  Curve measured{"measured: median images/s of a steady-state step", {}, CurveStyle::line_and_points, 0, {}};
  Curve ideal{"ideal: linear from " + base.name + " #" + std::to_string(base.run_id) + " (" +
                  std::to_string(base.workers) + (base.workers == 1 ? " worker)" : " workers)"),
              {},
              CurveStyle::dashed_reference,
              0,
              {}};
  for (const ThroughputRow& row : by_workers) {
    measured.points.emplace_back(row.workers, row.median_images_per_s);
    const double expected = per_worker * row.workers;
    const double efficiency = scaling_efficiency(with_median_images_per_s(row), with_median_images_per_s(base));
    measured.point_labels.push_back(std::to_string(std::lround(100 * efficiency)) + "%");
    if (ideal.points.empty() || ideal.points.back().first != row.workers)
      ideal.points.emplace_back(row.workers, expected);
  }

  Chart chart;
  chart.title = "Scaling: images/s against workers (" + std::to_string(rows.size()) + " runs, " + base.device + ")";
  chart.x_label = "workers (data-parallel ranks)";
  chart.whole_number_x = true;
  Panel panel;
  panel.title = "each point: its scaling efficiency, images/s against the ideal";
  panel.y_label = "images/s (median step, steady state)";
  panel.curves = {std::move(ideal), std::move(measured)};
  panel.y_from_zero = true;
  chart.panels.push_back(std::move(panel));
  return chart;
}

}  // namespace orchestrate::plot

#include "analysis/regressions.h"

#include <algorithm>
#include <array>
#include <map>

#include "analysis/reports.h"

namespace orchestrate {
namespace {

constexpr std::array<const char*, 5> kPhases{"data_wait", "compute", "sync", "optimizer", "other"};

// Seconds per image of each phase (kPhases' order), from a row's shares of
// its step time and its images/s over the same steps.
std::array<double, 5> seconds_per_image(const ThroughputRow& row) {
  const double per_image = row.images_per_s > 0 ? 1 / row.images_per_s : 0;
  const double other =
      std::max(0.0, 1 - row.data_wait_share - row.compute_share - row.sync_share - row.optimizer_share);
  return {row.data_wait_share * per_image, row.compute_share * per_image, row.sync_share * per_image,
          row.optimizer_share * per_image, other * per_image};
}

struct Measured {
  RunSummary run;
  ThroughputRow row;
};

}  // namespace

std::string comparison_key(const RunDetails& details, const CoreDefaults& defaults) {
  std::string key;
  for (const auto& [name, value] : defaults.complete(details.record.params))
    if (name != "run.name") key += name + "=" + value + "\n";
  return key + "host=" + details.record.host + "\ndevice=" + details.record.device +
         "\nworld_size=" + std::to_string(details.record.world_size);
}

std::vector<RegressionRow> find_regressions(const RunStore& store, const std::vector<RunSummary>& runs,
                                            double threshold, const CoreDefaults& defaults) {
  std::vector<RunSummary> ordered = runs;
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::map<std::string, std::vector<Measured>> earlier;  // by comparison key
  std::vector<RegressionRow> out;
  for (const auto& run : ordered) {
    if (run.status != "finished" || run.kind != "train") continue;
    const ThroughputRow row = throughput_of(store, run);
    if (row.steps == 0 || row.median_images_per_s <= 0) continue;
    auto& same = earlier[comparison_key(store.run_details(run), defaults)];
    if (!same.empty()) {
      std::vector<double> medians, spreads;
      std::array<std::vector<double>, 5> phases;
      for (const auto& before : same) {
        medians.push_back(before.row.median_images_per_s);
        spreads.push_back((before.row.p95_images_per_s - before.row.p5_images_per_s) / 2);
        const auto times = seconds_per_image(before.row);
        for (std::size_t p = 0; p < kPhases.size(); ++p) phases[p].push_back(times[p]);
      }
      RegressionRow result;
      result.run_id = run.id;
      result.name = run.name;
      result.baseline_runs = static_cast<std::int64_t>(same.size());
      result.baseline_images_per_s = median(medians);
      result.images_per_s = row.median_images_per_s;
      result.change = result.images_per_s / result.baseline_images_per_s - 1;
      const double spread = std::max((row.p95_images_per_s - row.p5_images_per_s) / 2, median(spreads));
      result.noise = spread / result.baseline_images_per_s;
      result.flagged = result.change < -threshold && -result.change > result.noise;
      const auto times = seconds_per_image(row);
      double most = -1;
      for (std::size_t p = 0; p < kPhases.size(); ++p) {
        const double grew = times[p] - median(phases[p]);
        if (grew > most) {
          most = grew;
          result.grown_phase = kPhases[p];
        }
      }
      result.grown_ms_per_image = 1000 * most;
      out.push_back(result);
    }
    same.push_back({run, row});
  }
  return out;
}

Table regressions_table(const std::vector<RegressionRow>& rows) {
  Table table{{"id", "name", "baseline_runs", "baseline_images_per_s", "images_per_s", "change", "noise", "flagged",
               "grown_phase", "grown_ms_per_image"},
              {}};
  for (const auto& row : rows)
    table.rows.push_back({integer_cell(row.run_id), text_cell(row.name), integer_cell(row.baseline_runs),
                          number_cell(row.baseline_images_per_s, 1), number_cell(row.images_per_s, 1),
                          number_cell(row.change, 4), number_cell(row.noise, 4),
                          bool_cell(row.flagged), text_cell(row.grown_phase),
                          number_cell(row.grown_ms_per_image, 4)});
  return table;
}

}  // namespace orchestrate

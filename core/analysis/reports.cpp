#include "analysis/reports.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace orchestrate {
namespace {

// The final metrics shown by `orchestrate runs`, in column order.
const std::vector<std::string> kRunsTableMetrics = {"eval/top1", "eval/top5", "train/loss"};

double median_of_sorted(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

// Nearest rank: the smallest value with at least a fraction q of the values at or below it.
double percentile_of_sorted(const std::vector<double>& sorted, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::max<std::size_t>(rank, 1) - 1];
}

// "2025-01-31T12:00:00.123Z" -> "2025-01-31 12:00:00": seconds are enough to tell runs apart.
bool is_derived(const RunSummary& run) { return run.kind != to_string(RunKind::train) || run.source_run_id != 0; }

// "train", "eval of 3", "rerun of 3" (a training run of run 3's recipe), or
// "eval" for the evaluation of a bare weights file.
std::string kind_cell(const RunSummary& run) {
  if (run.source_run_id == 0) return run.kind;
  return (run.kind == to_string(RunKind::train) ? "rerun" : run.kind) + " of " + std::to_string(run.source_run_id);
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return median_of_sorted(values);
}

double images_per_s(const StepTiming& step) {
  return step.total_s > 0 ? static_cast<double>(step.images) / step.total_s : 0.0;
}

double scaling_efficiency(const ThroughputRow& row, const ThroughputRow& baseline) {
  const double expected = baseline.images_per_s * row.workers / std::max(1, baseline.workers);
  return expected > 0 ? row.images_per_s / expected : 0.0;
}

std::vector<ThroughputRow> throughput_by_rank(const RunStore& store, const RunSummary& run) {
  std::vector<ThroughputRow> rows{throughput_of(run, store.step_timings(run.id))};
  // Ranks 1.. recorded rows only in a data-parallel job; a few ranks, one query each.
  for (int rank = 1;; ++rank) {
    const auto timings = store.step_timings(run.id, rank);
    if (timings.empty()) break;
    rows.push_back(throughput_of(run, timings));
    rows.back().rank = std::to_string(rank);
  }
  for (auto& row : rows) row.workers = static_cast<int>(rows.size());
  return rows;
}

ThroughputRow throughput_of(const RunStore& store, const RunSummary& run) {
  return throughput_by_rank(store, run).front();
}

ThroughputRow throughput_of(const RunSummary& run, const std::vector<StepTiming>& timings) {
  ThroughputRow row;
  row.run_id = run.id;
  row.name = run.name;
  row.device = run.device;
  row.wall_s = run.duration_s;
  for (const auto& t : timings) row.train_s += t.total_s;
  if (auto it = run.final_metrics.find("time/eval_s"); it != run.final_metrics.end()) row.eval_s = it->second;
  if (auto it = run.final_metrics.find("time/setup_s"); it != run.final_metrics.end()) row.setup_s = it->second;
  const auto metric = [&](const char* name) {
    const auto it = run.final_metrics.find(name);
    return it == run.final_metrics.end() || !std::isfinite(it->second) ? 0.0 : it->second;
  };
  row.flops_per_image = metric(kTrainFlopsPerImageMetric);
  row.peak_flops_per_s = metric(kPeakFlopsMetric);
  row.datasheet_flops_per_s = metric(kDatasheetFlopsMetric);
  if (const auto it = run.final_metrics.find(kDeviceBusyMetric);
      it != run.final_metrics.end() && it->second >= 0 && it->second <= 1)
    row.device_busy_share = it->second;

  const std::size_t first = timings.size() >= kMinStepsToDropWarmUp ? 1 : 0;
  row.warmup_steps = static_cast<std::int64_t>(first);
  if (timings.size() <= first) return row;

  std::vector<double> step_seconds, step_images_per_s;
  double total_s = 0, data_wait_s = 0, compute_s = 0, sync_s = 0, optimizer_s = 0, images = 0, bytes = 0;
  for (std::size_t i = first; i < timings.size(); ++i) {
    step_seconds.push_back(timings[i].total_s);
    if (timings[i].total_s > 0) step_images_per_s.push_back(images_per_s(timings[i]));
    total_s += timings[i].total_s;
    data_wait_s += timings[i].data_wait_s;
    compute_s += timings[i].compute_s;
    sync_s += timings[i].sync_s;
    optimizer_s += timings[i].optimizer_s;
    bytes += static_cast<double>(timings[i].bytes_sent);
    images += static_cast<double>(timings[i].images);
  }
  std::sort(step_seconds.begin(), step_seconds.end());
  std::sort(step_images_per_s.begin(), step_images_per_s.end());
  if (!step_images_per_s.empty()) {
    row.median_images_per_s = median_of_sorted(step_images_per_s);
    row.p5_images_per_s = percentile_of_sorted(step_images_per_s, 0.05);
    row.p95_images_per_s = percentile_of_sorted(step_images_per_s, 0.95);
  }

  row.steps = static_cast<std::int64_t>(step_seconds.size());
  row.median_step_s = median_of_sorted(step_seconds);
  row.p95_step_s = percentile_of_sorted(step_seconds, 0.95);
  if (total_s > 0) {
    row.images_per_s = images / total_s;
    row.data_wait_share = data_wait_s / total_s;
    row.compute_share = compute_s / total_s;
    row.sync_share = sync_s / total_s;
    row.optimizer_share = optimizer_s / total_s;
  }
  row.bytes_per_step = bytes / static_cast<double>(step_seconds.size());
  return row;
}

// "lr=0.1, team=vision": a run's tags in one cell, keys in order.
Table runs_table(const std::vector<RunSummary>& runs, const std::vector<std::string>& also_metrics) {
  // Every column always, so CSV and JSON keep their keys; people see a column
  // only where a run needs it.
  Table table{{"id", "name", "kind", "source_run", "status", "started", "ended", "duration_s", "last_seen", "tags"}, {}};
  // Where every run trained, a kind column would only repeat "train".
  if (!std::any_of(runs.begin(), runs.end(), is_derived)) table.hidden_for_people.insert("kind");
  // When a lost run died is worth a column; for every other run it would
  // repeat the start plus the duration, so people see it only when one is lost.
  const bool any_lost = std::any_of(runs.begin(), runs.end(), [](const RunSummary& run) {
    return run.status == to_string(RunStatus::lost);
  });
  if (!any_lost) table.hidden_for_people.insert("last_seen");
  if (std::none_of(runs.begin(), runs.end(), [](const RunSummary& run) { return !run.tags.empty(); }))
    table.hidden_for_people.insert("tags");
  table.hidden_for_people.insert({"source_run", "ended"});  // in kind ("rerun of 3") and duration_s
  // The metric columns: the usual ones, then those asked for (--sort). People
  // see those some run has; programs get them all, as the metrics object.
  std::vector<std::string> metrics = kRunsTableMetrics;
  for (const std::string& metric : also_metrics)
    if (std::find(metrics.begin(), metrics.end(), metric) == metrics.end()) metrics.push_back(metric);
  table.json_groups.push_back({"metrics", table.headers.size(), metrics.size()});
  for (const std::string& metric : metrics) {
    table.headers.push_back(metric);
    const bool any = std::any_of(runs.begin(), runs.end(),
                                 [&](const RunSummary& run) { return run.final_metrics.count(metric) > 0; });
    if (!any) table.hidden_for_people.insert(metric);
  }

  for (const RunSummary& run : runs) {
    Cell kind = text_cell(kind_cell(run));
    kind.exact = run.kind;  // programs: the kind alone, the source in source_run
    std::vector<Cell> row = {integer_cell(run.id),
                             text_cell(run.name),
                             kind,
                             run.source_run_id ? integer_cell(run.source_run_id) : Cell(),
                             text_cell(run.status),
                             time_cell(run.started_at),
                             time_cell(run.ended_at),
                             number_cell(run.duration_s, 1),
                             time_cell(run.last_seen_at),
                             object_cell({run.tags.begin(), run.tags.end()})};
    if (!any_lost || run.status != to_string(RunStatus::lost)) row[8].text.clear();  // people: only a lost run's
    for (const std::string& metric : metrics) {
      const auto found = run.final_metrics.find(metric);
      row.push_back(found == run.final_metrics.end() ? Cell() : number_cell(found->second, 4));
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

void hide_throughput_details(Table& table) {
  table.hidden_for_people.insert({"warmup", "p5_images_per_s", "p95_images_per_s", "p95_step_s", "compute_share",
                                  "optimizer_share", "setup_s", "train_s", "eval_s", "accounted",
                                  "train_gflop_per_image", "achieved_gflop_per_s", "peak_gflop_per_s",
                                  "datasheet_mfu_percent"});
}

Table throughput_table(const std::vector<ThroughputRow>& rows) {
  const auto none = [&](auto predicate) { return std::none_of(rows.begin(), rows.end(), predicate); };
  // Every column always, so CSV and JSON keep their keys (null where a run has
  // no value); people see the optional ones only where some run has one.
  Table table{{"id", "name", "rank", "device", "workers", "steps", "warmup", "images_per_s", "median_images_per_s",
               "p5_images_per_s", "p95_images_per_s", "median_step_s", "p95_step_s", "data_wait_share",
               "compute_share", "sync_share", "optimizer_share", "wall_s", "setup_s", "train_s", "eval_s", "accounted",
               "sent_mib_per_step", "scaling_efficiency", "train_gflop_per_image", "achieved_gflop_per_s",
               "peak_gflop_per_s", "mfu_percent", "datasheet_mfu_percent", "gpu_busy_percent"},
              {}};
  if (none([](const ThroughputRow& row) { return row.rank != "job"; })) table.hidden_for_people.insert("rank");
  if (none([](const ThroughputRow& row) { return row.bytes_per_step > 0; }))
    table.hidden_for_people.insert("sent_mib_per_step");
  if (none([](const ThroughputRow& row) { return row.bytes_per_step > 0 || row.sync_share > 0; }))
    table.hidden_for_people.insert("sync_share");  // one process: no sync
  if (none([](const ThroughputRow& row) { return row.scaling_efficiency >= 0; }))
    table.hidden_for_people.insert("scaling_efficiency");
  if (none([](const ThroughputRow& row) { return row.flops_per_image > 0; }))
    table.hidden_for_people.insert(
        {"train_gflop_per_image", "achieved_gflop_per_s", "peak_gflop_per_s", "mfu_percent"});
  if (none([](const ThroughputRow& row) { return row.datasheet_flops_per_s > 0; }))
    table.hidden_for_people.insert("datasheet_mfu_percent");
  if (none([](const ThroughputRow& row) { return row.device_busy_share >= 0; }))
    table.hidden_for_people.insert("gpu_busy_percent");
  const auto known = [](double value, double shown, int decimals) {
    return value > 0 ? number_cell(shown, decimals) : Cell();
  };
  for (const ThroughputRow& row : rows) {
    // Step times to 0.01 ms for people: fast CPU and GPU steps take a few
    // milliseconds. Sent MiB to 1e-6: a compressed update of a small model is a few kB.
    table.rows.push_back(
        {integer_cell(row.run_id), text_cell(row.name), text_cell(row.rank), text_cell(row.device),
         integer_cell(row.workers), integer_cell(row.steps), integer_cell(row.warmup_steps),
         number_cell(row.images_per_s, 1), number_cell(row.median_images_per_s, 1),
         number_cell(row.p5_images_per_s, 1), number_cell(row.p95_images_per_s, 1),
         number_cell(row.median_step_s, 5), number_cell(row.p95_step_s, 5), number_cell(row.data_wait_share, 3),
         number_cell(row.compute_share, 3), number_cell(row.sync_share, 3), number_cell(row.optimizer_share, 3),
         number_cell(row.wall_s, 2), number_cell(row.setup_s, 2), number_cell(row.train_s, 2),
         number_cell(row.eval_s, 2), number_cell(row.accounted_share(), 3),
         number_cell(row.bytes_per_step / 1048576.0, 6),
         row.scaling_efficiency >= 0 ? number_cell(row.scaling_efficiency, 3) : Cell(),
         known(row.flops_per_image, row.flops_per_image / 1e9, 6),
         known(row.flops_per_image, row.achieved_flops_per_s() / 1e9, 2),
         known(row.peak_flops_per_s, row.peak_flops_per_s / 1e9, 2), known(row.mfu(), 100 * row.mfu(), 2),
         known(row.datasheet_mfu(), 100 * row.datasheet_mfu(), 2),
         row.device_busy_share >= 0 ? number_cell(100 * row.device_busy_share, 1) : Cell()});
  }
  return table;
}

}  // namespace orchestrate

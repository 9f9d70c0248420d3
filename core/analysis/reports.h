// Reports over the run store: the tables behind `orchestrate runs` and
// `orchestrate report throughput`. Each is a Table, printed with render().
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/table_format.h"
#include "store/run_store.h"

namespace orchestrate {

// The first step builds kernels, allocates memory and fills the data
// pipeline, so it is left out of throughput, but only when enough steps
// remain for that not to hide a real cost of a short run.
inline constexpr std::size_t kMinStepsToDropWarmUp = 11;  // "more than 10 steps"

struct ThroughputRow {
  std::int64_t run_id = 0;
  std::string name, device;
  // "job": rank 0's rows, the job's steps (all ranks' images); "1", "2", ...:
  // that rank's own rows (report throughput --per-rank).
  std::string rank = "job";
  int workers = 1;               // ranks that recorded steps
  std::int64_t steps = 0;        // steps measured (after dropping warm-up)
  std::int64_t warmup_steps = 0;  // the first steps left out (kernel selection, allocation, pipeline fill)
  double median_step_s = 0;      // of total_s
  double p95_step_s = 0;         // nearest-rank 95th percentile of total_s
  double images_per_s = 0;       // total images / total step time
  double median_images_per_s = 0;  // the median step's images / its time: unmoved by a few slow steps
  double p5_images_per_s = 0;      // nearest-rank percentiles of the steps' images / time
  double p95_images_per_s = 0;
  double compute_share = 0;        // sum compute_s / sum total_s: forward + backward
  double optimizer_share = 0;      // sum optimizer_s / sum total_s: unscale, wrappers, optimizer step
  double data_wait_share = 0;    // sum data_wait_s / sum total_s: how starved the model was
  double sync_share = 0;         // sum sync_s / sum total_s: gradient communication (compression included)
  double bytes_per_step = 0;     // mean gradient bytes rank 0 sent per update; 0: not recorded (alone)
  // Where the run's wall time went. Every step's total_s runs from the end of
  // the step before, so setup + train + eval account for the whole run.
  double wall_s = 0;   // started_at to ended_at (or now)
  double train_s = 0;  // sum of every step's total_s, warm-up step included
  double eval_s = 0;   // the trainer's time/eval_s metric
  double setup_s = 0;  // the trainer's time/setup_s metric: loading data, building components
  double accounted_share() const { return wall_s > 0 ? (setup_s + train_s + eval_s) / wall_s : 0; }
  // Model FLOPs utilisation, from the run's perf/* metrics (run_records.h;
  // 0 where the run recorded none).
  double flops_per_image = 0;        // forward + backward of one training image
  double peak_flops_per_s = 0;       // one device's measured matmul peak
  double datasheet_flops_per_s = 0;  // that GPU's datasheet figure; 0 on a CPU or a GPU not listed
  // The share of the training time the GPU ran kernels (NVML; kDeviceBusyMetric), or -1: not measured.
  double device_busy_share = -1;
  double achieved_flops_per_s() const { return images_per_s * flops_per_image; }
  // Achieved FLOP/s over the peak of the devices that trained this row's
  // images: every rank's for the job's row, one for a rank's. 0: unknown.
  double mfu() const { return mfu_against(peak_flops_per_s); }
  double datasheet_mfu() const { return mfu_against(datasheet_flops_per_s); }
  double mfu_against(double peak_per_device) const {
    return peak_per_device > 0 ? achieved_flops_per_s() / (peak_per_device * devices()) : 0;
  }
  // The devices that trained this row's images: every rank's for the job's
  // row, one for a rank's. The peak is one device's.
  int devices() const { return rank == "job" ? std::max(1, workers) : 1; }
  // images_per_s against a baseline run's, per worker: 1 is perfect scaling
  // (report throughput --baseline RUN); < 0: no baseline.
  double scaling_efficiency = -1;
};

// The baseline's images/s, scaled by workers / its workers, against the row's:
// the seed's scaling chart as a number (1.0: N workers are N times as fast).
double scaling_efficiency(const ThroughputRow& row, const ThroughputRow& baseline);

// The median of `values` (the mean of the middle two for an even count); 0 for none.
double median(std::vector<double> values);

// One step's images / its total_s: a point of the images/s curve; 0 for a
// step that took no time. throughput_of's percentiles are over these.
double images_per_s(const StepTiming& step);

// Throughput of one run from its step timings (the job's: rank 0's rows).
// All zero when it has no steps.
ThroughputRow throughput_of(const RunStore& store, const RunSummary& run);
// The job's row, then one row per rank 1.. of a data-parallel run.
std::vector<ThroughputRow> throughput_by_rank(const RunStore& store, const RunSummary& run);
// The same over timings already read (what throughput_of does after reading).
ThroughputRow throughput_of(const RunSummary& run, const std::vector<StepTiming>& timings);

// The runs as rows: id, name, kind ("train", "eval"; people see "eval of
// 3"), source_run, status, started, ended, duration_s, last_seen, tags (an
// object in JSON), then eval/top1, eval/top5, train/loss and `also_metrics`
// (final values; the "metrics" object in JSON). Every column always, so CSV
// and JSON keep their keys (share/doc/schemas/runs.schema.json); people see
// kind only when some run did not just train, last_seen only when one is
// lost, tags when one has some, a metric when some run has it.
Table runs_table(const std::vector<RunSummary>& runs, const std::vector<std::string>& also_metrics = {});

// id, name, rank ("job", or a rank), device, workers, steps, warmup, the
// images/s figures, the step times and the shares of step time (data_wait,
// compute = forward + backward, sync = communication, optimizer; what they
// leave is logging and the store), wall_s, setup_s, train_s, eval_s,
// accounted (the share of wall_s in those three), sent_mib_per_step,
// scaling_efficiency (with a baseline), train_gflop_per_image,
// achieved_gflop_per_s, peak_gflop_per_s, mfu_percent, datasheet_mfu_percent
// (on a listed GPU). Every column always (null where a run has no value:
// share/doc/schemas/report-throughput.schema.json); people see rank, the
// communication, scaling and FLOP columns only where some row has a value.
Table throughput_table(const std::vector<ThroughputRow>& rows);
// Hides for people the columns behind the headline figures (warm-up, the
// percentiles, the step's other shares, the wall time's parts, the FLOPs
// behind mfu_percent), which `report throughput --wide` shows: all of them
// made a table some 350 columns wide. CSV and JSON keep every column.
void hide_throughput_details(Table& table);

}  // namespace orchestrate

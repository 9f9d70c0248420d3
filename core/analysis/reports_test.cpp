#include "analysis/reports.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
using testing::ScratchDir;
namespace {

// What a row prints: the test compares text; JSON types have their own tests.
std::vector<std::string> texts(const std::vector<Cell>& row) {
  std::vector<std::string> out;
  for (const Cell& cell : row) out.push_back(cell.text);
  return out;
}

StepTiming step(std::int64_t number, double total_s, double data_wait_s, std::int64_t images) {
  StepTiming timing;
  timing.step = number;
  timing.images = images;
  timing.total_s = total_s;
  timing.data_wait_s = data_wait_s;
  return timing;
}

RunSummary summary(std::int64_t id, const std::string& name) {
  RunSummary run;
  run.id = id;
  run.name = name;
  run.status = "finished";
  run.device = "cpu";
  run.started_at = "2025-01-31T12:00:00.123Z";
  run.ended_at = "2025-01-31T12:01:05.623Z";
  run.duration_s = 65.5;
  return run;
}

// 12 steps: a slow warm-up step, then 0.11, 0.10, ..., 0.01 s (out of order
// on purpose), 32 images and 1 ms of data wait each.
std::vector<StepTiming> twelve_steps() {
  std::vector<StepTiming> timings = {step(0, 5.0, 4.0, 32)};
  for (int i = 11; i >= 1; --i) timings.push_back(step(12 - i, 0.01 * i, 0.001, 32));
  return timings;
}

TEST(ThroughputTest, DropsTheWarmUpStepAndComputesByHand) {
  const ThroughputRow row = throughput_of(summary(3, "mlp"), twelve_steps());
  EXPECT_EQ(row.run_id, 3);
  EXPECT_EQ(row.name, "mlp");
  EXPECT_EQ(row.device, "cpu");
  EXPECT_EQ(row.steps, 11);
  EXPECT_NEAR(row.median_step_s, 0.06, 1e-12);             // 6th of 11 sorted
  EXPECT_NEAR(row.p95_step_s, 0.11, 1e-12);                // rank ceil(0.95 * 11) = 11
  EXPECT_NEAR(row.images_per_s, 352.0 / 0.66, 1e-9);       // 11 * 32 images in 0.01 + ... + 0.11 s
  EXPECT_NEAR(row.data_wait_share, 0.011 / 0.66, 1e-12);   // the warm-up's 4 s of waiting is left out
}

TEST(ThroughputTest, MfuIsAchievedFlopsOverThePeakOfEveryDeviceThatTrained) {
  RunSummary run = summary(3, "convnet");
  run.final_metrics = {{kTrainFlopsPerImageMetric, 16.4e6}, {kPeakFlopsMetric, 100e9}};
  ThroughputRow row = throughput_of(run, twelve_steps());
  EXPECT_NEAR(row.achieved_flops_per_s(), 352.0 / 0.66 * 16.4e6, 1e-3);
  EXPECT_NEAR(row.mfu(), 352.0 / 0.66 * 16.4e6 / 100e9, 1e-12);
  row.workers = 2;  // the job's images came from two devices
  EXPECT_NEAR(row.mfu(), 352.0 / 0.66 * 16.4e6 / 200e9, 1e-12);
  row.rank = "1";  // a rank's own images, from its device alone
  EXPECT_NEAR(row.mfu(), 352.0 / 0.66 * 16.4e6 / 100e9, 1e-12);
  EXPECT_EQ(row.datasheet_mfu(), 0);

  row.rank = "job";
  row.workers = 1;
  const Table table = for_people(throughput_table({row, throughput_of(summary(4, "uncounted"), twelve_steps())}));
  const auto column = [&](const std::string& name) {
    return std::find(table.headers.begin(), table.headers.end(), name) - table.headers.begin();
  };
  ASSERT_LT(column("mfu_percent"), static_cast<long>(table.headers.size()));
  EXPECT_EQ(table.rows[0][column("train_gflop_per_image")].text, "0.016400");
  EXPECT_EQ(table.rows[0][column("peak_gflop_per_s")].text, "100.00");
  EXPECT_EQ(table.rows[0][column("mfu_percent")].text, "8.75");  // 533.3 images/s x 16.4 MFLOP / 100 GFLOP/s
  EXPECT_TRUE(table.rows[1][column("mfu_percent")].text.empty());  // a run that counted nothing: null
  EXPECT_EQ(column("datasheet_mfu_percent"), static_cast<long>(table.headers.size()));  // on a CPU: no column
}

// The GPU's busy share (NVML, recorded at the run's end) is a column where
// some run has it; a value no share can be is not read as one.
TEST(ThroughputTest, TheGpusBusyShareIsAColumnWhereARunMeasuredIt) {
  RunSummary measured = summary(3, "convnet");
  measured.final_metrics = {{kDeviceBusyMetric, 0.384}};
  RunSummary damaged = summary(4, "convnet");
  damaged.final_metrics = {{kDeviceBusyMetric, 38.4}};  // a percent, where a share belongs
  const ThroughputRow row = throughput_of(measured, twelve_steps());
  EXPECT_DOUBLE_EQ(row.device_busy_share, 0.384);
  EXPECT_EQ(throughput_of(damaged, twelve_steps()).device_busy_share, -1);
  EXPECT_EQ(throughput_of(summary(5, "cpu"), twelve_steps()).device_busy_share, -1);

  const Table table = for_people(throughput_table({row, throughput_of(summary(5, "cpu"), twelve_steps())}));
  const auto column = std::find(table.headers.begin(), table.headers.end(), "gpu_busy_percent") - table.headers.begin();
  ASSERT_LT(column, static_cast<long>(table.headers.size()));
  EXPECT_EQ(table.rows[0][column].text, "38.4");
  EXPECT_TRUE(table.rows[1][column].text.empty());
  const Table unmeasured = for_people(throughput_table({throughput_of(summary(5, "cpu"), twelve_steps())}));
  EXPECT_EQ(std::find(unmeasured.headers.begin(), unmeasured.headers.end(), "gpu_busy_percent"),
            unmeasured.headers.end());
}

TEST(ThroughputTest, NoRunCountedFlopsNoMfuColumns) {
  const Table all = throughput_table({throughput_of(summary(3, "mlp"), twelve_steps())});
  const Table table = for_people(all);
  EXPECT_EQ(std::find(table.headers.begin(), table.headers.end(), "mfu_percent"), table.headers.end());
  // Programs keep the key, null.
  const auto json = nlohmann::json::parse(render(all, TableFormat::json));
  EXPECT_TRUE(json.at(0).at("mfu_percent").is_null()) << json;
}

TEST(ThroughputTest, KeepsEveryStepOfAShortRun) {
  const std::vector<StepTiming> timings = {step(0, 4.0, 1.0, 10), step(1, 1.0, 0.0, 10), step(2, 3.0, 0.5, 10),
                                           step(3, 2.0, 0.5, 10)};
  const ThroughputRow row = throughput_of(summary(1, "short"), timings);
  EXPECT_EQ(row.steps, 4);
  EXPECT_DOUBLE_EQ(row.median_step_s, 2.5);  // mean of the middle two, 2 and 3
  EXPECT_DOUBLE_EQ(row.p95_step_s, 4.0);     // rank ceil(3.8) = 4
  EXPECT_DOUBLE_EQ(row.images_per_s, 4.0);   // 40 images in 10 s
  EXPECT_DOUBLE_EQ(row.data_wait_share, 0.2);
}

TEST(ThroughputTest, NinetyFifthPercentileIsTheNearestRank) {
  std::vector<StepTiming> timings = {step(0, 100.0, 0, 1)};  // warm-up, dropped
  for (int i = 1; i <= 20; ++i) timings.push_back(step(i, i, 0, 1));
  const ThroughputRow row = throughput_of(summary(1, "p95"), timings);
  EXPECT_EQ(row.steps, 20);
  EXPECT_DOUBLE_EQ(row.p95_step_s, 19.0);  // rank ceil(0.95 * 20) = 19
  EXPECT_DOUBLE_EQ(row.median_step_s, 10.5);
}

TEST(ThroughputTest, ARunWithoutStepsIsAllZero) {
  const ThroughputRow row = throughput_of(summary(2, "empty"), {});
  EXPECT_EQ(row.steps, 0);
  EXPECT_EQ(row.median_step_s, 0.0);
  EXPECT_EQ(row.p95_step_s, 0.0);
  EXPECT_EQ(row.images_per_s, 0.0);
  EXPECT_EQ(row.data_wait_share, 0.0);
}

TEST(ThroughputTest, ReadsTheStepsFromTheStore) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  RunRecord record;
  record.name = "stored";
  record.device = "cuda:0";
  const auto id = store.begin_run(record);
  for (const StepTiming& timing : twelve_steps()) store.record_step(id, timing);
  store.finish_run(id, RunStatus::finished);

  const ThroughputRow row = throughput_of(store, *store.find_run("stored"));
  EXPECT_EQ(row.run_id, id);
  EXPECT_EQ(row.device, "cuda:0");
  EXPECT_EQ(row.steps, 11);
  EXPECT_NEAR(row.median_step_s, 0.06, 1e-12);
  EXPECT_NEAR(row.images_per_s, 352.0 / 0.66, 1e-9);
}

TEST(RunsTableTest, ShowsTheMetricsSomeRunHas) {
  RunSummary trained = summary(2, "resnet");
  trained.final_metrics = {{"eval/top1", 0.91234}, {"train/loss", 0.25}, {"eval/loss", 0.3}};
  RunSummary running = summary(1, "mlp");
  running.status = "running";
  running.ended_at = "";
  running.duration_s = 3.04;

  const Table table = for_people(runs_table({trained, running}));
  EXPECT_EQ(table.headers,
            (std::vector<std::string>{"id", "name", "status", "started", "duration_s", "eval/top1", "train/loss"}));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(texts(table.rows[0]), (std::vector<std::string>{"2", "resnet", "finished", "2025-01-31 12:00:00", "65.5",
                                                      "0.9123", "0.2500"}));
  EXPECT_EQ(texts(table.rows[1]),
            (std::vector<std::string>{"1", "mlp", "running", "2025-01-31 12:00:00", "3.0", "", ""}));
}

TEST(RunsTableTest, ALostRunShowsWhenItWasLastSeen) {
  RunSummary lost = summary(3, "crashed");
  lost.status = "lost";
  lost.ended_at = "";
  lost.last_seen_at = "2025-01-31T12:00:42.900Z";
  lost.duration_s = 42.777;
  RunSummary finished = summary(2, "resnet");
  finished.last_seen_at = finished.ended_at;

  const Table table = for_people(runs_table({lost, finished}));
  EXPECT_EQ(table.headers,
            (std::vector<std::string>{"id", "name", "status", "started", "duration_s", "last_seen"}));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(texts(table.rows[0]),
            (std::vector<std::string>{"3", "crashed", "lost", "2025-01-31 12:00:00", "42.8", "2025-01-31 12:00:42"}));
  EXPECT_EQ(texts(table.rows[1]),
            (std::vector<std::string>{"2", "resnet", "finished", "2025-01-31 12:00:00", "65.5", ""}));
}

TEST(RunsTableTest, AnEvalRunShowsItsKindAndTheRunItEvaluates) {
  RunSummary of_checkpoint = summary(3, "resnet_eval");
  of_checkpoint.kind = "eval";
  of_checkpoint.source_run_id = 2;
  of_checkpoint.final_metrics = {{"eval/top1", 0.5}};
  RunSummary of_file = summary(4, "resnet_eval");
  of_file.kind = "eval";
  RunSummary trained = summary(2, "resnet");
  trained.final_metrics = {{"eval/top1", 0.5}};

  const Table table = for_people(runs_table({of_file, of_checkpoint, trained}));
  EXPECT_EQ(table.headers,
            (std::vector<std::string>{"id", "name", "kind", "status", "started", "duration_s", "eval/top1"}));
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(texts(table.rows[0]), (std::vector<std::string>{"4", "resnet_eval", "eval", "finished", "2025-01-31 12:00:00",
                                                      "65.5", ""}));
  EXPECT_EQ(texts(table.rows[1]), (std::vector<std::string>{"3", "resnet_eval", "eval of 2", "finished",
                                                      "2025-01-31 12:00:00", "65.5", "0.5000"}));
  EXPECT_EQ(texts(table.rows[2]),
            (std::vector<std::string>{"2", "resnet", "train", "finished", "2025-01-31 12:00:00", "65.5", "0.5000"}));
}

// What programs read: every key in every row, the stored values at full
// precision, ISO times, tags and metrics as objects.
TEST(RunsTableTest, JsonHasEveryKeyAtFullPrecision) {
  RunSummary trained = summary(2, "resnet");
  trained.final_metrics = {{"eval/top1", 0.91234567890123}};
  trained.tags = {{"team", "vision"}};
  const auto json = nlohmann::json::parse(render(runs_table({trained}), TableFormat::json));
  const auto& run = json.at(0);
  EXPECT_EQ(run.at("started"), trained.started_at);
  EXPECT_EQ(run.at("ended"), trained.ended_at);
  EXPECT_EQ(run.at("kind"), "train");
  EXPECT_TRUE(run.at("source_run").is_null());
  EXPECT_EQ(run.at("tags"), (nlohmann::json{{"team", "vision"}}));
  EXPECT_EQ(run.at("metrics").at("eval/top1").get<double>(), 0.91234567890123);
  EXPECT_TRUE(run.at("metrics").at("train/loss").is_null());
  EXPECT_EQ(run.at("duration_s").get<double>(), trained.duration_s);
}

TEST(RunsTableTest, NoRunsGiveOnlyHeaders) {
  const Table table = for_people(runs_table({}));
  EXPECT_EQ(table.headers, (std::vector<std::string>{"id", "name", "status", "started", "duration_s"}));
  EXPECT_TRUE(table.rows.empty());
}

TEST(ThroughputTableTest, FormatsEachColumn) {
  ThroughputRow row;
  row.run_id = 3;
  row.name = "mlp";
  row.device = "cpu";
  row.steps = 11;
  row.warmup_steps = 1;
  row.median_step_s = 0.06;
  row.p95_step_s = 0.11;
  row.images_per_s = 352.0 / 0.66;
  row.median_images_per_s = 32 / 0.06;
  row.p5_images_per_s = 32 / 0.11;
  row.p95_images_per_s = 32 / 0.01;
  row.data_wait_share = 0.011 / 0.66;
  row.compute_share = 0.5;
  row.sync_share = 0.125;
  row.optimizer_share = 0.25;
  row.wall_s = 10.0;
  row.setup_s = 1.0;
  row.train_s = 7.0;
  row.eval_s = 1.5;
  const Table table = for_people(throughput_table({row}));
  EXPECT_EQ(table.headers,
            (std::vector<std::string>{"id", "name", "device", "workers", "steps", "warmup", "images_per_s",
                                      "median_images_per_s", "p5_images_per_s", "p95_images_per_s", "median_step_s",
                                      "p95_step_s", "data_wait_share", "compute_share", "sync_share",
                                      "optimizer_share", "wall_s", "setup_s", "train_s", "eval_s", "accounted"}));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(texts(table.rows[0]),
            (std::vector<std::string>{"3", "mlp", "cpu", "1", "11", "1", "533.3", "533.3", "290.9", "3200.0",
                                      "0.06000", "0.11000", "0.017", "0.500", "0.125", "0.250", "10.00", "1.00",
                                      "7.00", "1.50", "0.950"}));

  // Without --wide, people see the headline figures; JSON keeps every column.
  Table compact = throughput_table({row});
  hide_throughput_details(compact);
  EXPECT_EQ(for_people(compact).headers,
            (std::vector<std::string>{"id", "name", "device", "workers", "steps", "images_per_s",
                                      "median_images_per_s", "median_step_s", "data_wait_share", "sync_share",
                                      "wall_s"}));
  const auto json = nlohmann::json::parse(render(compact, TableFormat::json));
  EXPECT_EQ(json[0]["p5_images_per_s"], row.p5_images_per_s);
  EXPECT_EQ(json[0]["accounted"].get<double>(), row.accounted_share());
}

// The step-time breakdown and the spread of images/s over the steady state.
TEST(ThroughputTest, SharesAndPercentilesOfTheSteadyState) {
  std::vector<StepTiming> timings = twelve_steps();
  for (auto& t : timings) {
    t.compute_s = 0.5 * t.total_s;
    t.sync_s = 0.25 * t.total_s;
    t.optimizer_s = 0.125 * t.total_s;
  }
  const ThroughputRow row = throughput_of(summary(3, "mlp"), timings);
  EXPECT_EQ(row.warmup_steps, 1);
  EXPECT_NEAR(row.compute_share, 0.5, 1e-12);
  EXPECT_NEAR(row.sync_share, 0.25, 1e-12);
  EXPECT_NEAR(row.optimizer_share, 0.125, 1e-12);
  // Per-step images/s: 32 / 0.01 ... 32 / 0.11; nearest ranks 1 (ceil 0.55) and 11 (ceil 10.45).
  EXPECT_NEAR(row.p5_images_per_s, 32 / 0.11, 1e-9);
  EXPECT_NEAR(row.p95_images_per_s, 32 / 0.01, 1e-9);
  EXPECT_NEAR(row.median_images_per_s, 32 / 0.06, 1e-9);
}

// The seed's scaling chart as a number: 2 workers at 1.8x one worker's images/s are 90 % efficient.
TEST(ThroughputTest, ScalingEfficiencyAgainstABaselinePerWorker) {
  ThroughputRow one, two;
  one.images_per_s = 1000;
  two.images_per_s = 1800;
  two.workers = 2;
  EXPECT_NEAR(scaling_efficiency(two, one), 0.9, 1e-12);
  EXPECT_NEAR(scaling_efficiency(one, one), 1.0, 1e-12);
  two.scaling_efficiency = 0.9;
  const Table table = for_people(throughput_table({two}));
  EXPECT_EQ(table.headers.back(), "scaling_efficiency");
  EXPECT_EQ(table.rows[0].back().text, "0.900");
}

// A data-parallel run: the job's row (rank 0's rows, every rank's images)
// and, per rank, that rank's own; each row counts the job's workers.
TEST(ThroughputTest, ByRankReadsEachRanksRows) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  RunRecord record;
  record.name = "dp";
  record.world_size = 2;
  const auto id = store.begin_run(record);
  for (int rank = 0; rank < 2; ++rank)
    for (std::int64_t s = 1; s <= 3; ++s) {
      StepTiming t = step(s, rank == 0 ? 0.1 : 0.2, 0.0, rank == 0 ? 64 : 32);
      t.rank = rank;
      store.record_step(id, t);
    }
  store.flush();
  const auto rows = throughput_by_rank(store, *store.find_run("dp"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].rank, "job");
  EXPECT_EQ(rows[1].rank, "1");
  EXPECT_EQ(rows[0].workers, 2);
  EXPECT_NEAR(rows[0].images_per_s, 640.0, 1e-9);
  EXPECT_NEAR(rows[1].images_per_s, 160.0, 1e-9);
  const Table table = throughput_table(rows);
  EXPECT_EQ(table.headers[2], "rank");
}

}  // namespace
}  // namespace orchestrate

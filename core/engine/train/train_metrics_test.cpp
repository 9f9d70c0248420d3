// Metrics and timing alone: a log point records the window's mean loss, its
// rows and the other parts' metrics in the store; a loss that diverged stops
// the run under on_nonfinite = "stop", with an event saying where; the
// evaluation seconds are state a resume keeps.
#include "engine/train/train_metrics.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <limits>

#include "store/run_store_test_support.h"

namespace orchestrate {
namespace {

// One update as the loop makes it: its phases on the timer, then its row.
void add_update(TrainMetrics& metrics, std::int64_t step, double loss) {
  metrics.timer().compute_begins();
  metrics.timer().compute_ends();
  metrics.timer().optimizer_ends();
  StepTiming row;
  row.step = step;
  row.epoch = 1;
  row.images = 8;
  row.total_s = 0.01;
  metrics.window().add_update(row, at::scalar_tensor(loss));
}

TEST(TrainMetrics, ALogPointRecordsTheMeanLossTheRowsAndTheOtherPartsMetrics) {
  testing::ScratchRun run;
  TrainMetrics metrics(run.recorder, c10::kCPU, nullptr, NonFinitePolicy::stop, /*flush_seconds=*/60,
                       [](MetricValues& more) { more.emplace_back("train/reg_loss", 0.5); });
  add_update(metrics, 1, 1.0);
  add_update(metrics, 2, 3.0);
  metrics.log_point(1);
  EXPECT_EQ(metrics.recent_loss(), 2.0);
  EXPECT_EQ(metrics.latest().at("train/loss"), 2.0);
  run.store.flush();
  EXPECT_EQ(run.store.step_timings(run.id).size(), 2U);
  const auto summary = run.store.find_run(std::to_string(run.id));
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->final_metrics.at("train/loss"), 2.0);
  EXPECT_EQ(summary->final_metrics.at("train/reg_loss"), 0.5);
}

TEST(TrainMetrics, ADivergedLossStopsTheRunNamingTheStep) {
  testing::ScratchRun run;
  TrainMetrics metrics(run.recorder, c10::kCPU, nullptr, NonFinitePolicy::stop, 60, {});
  add_update(metrics, 1, 1.0);
  add_update(metrics, 2, std::numeric_limits<double>::infinity());
  const std::string message = testing::error_message_of([&] { metrics.log_point(1); });
  EXPECT_NE(message.find("training diverged: loss is inf at step 2"), std::string::npos) << message;
  run.store.flush();
  const auto events = run.store.events(run.id);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, "nonfinite_loss");
}

TEST(TrainMetrics, TheEvaluationSecondsAreKeptAcrossAResume) {
  testing::ScratchRun run;
  TrainMetrics first(run.recorder, c10::kCPU, nullptr, NonFinitePolicy::skip, 60, {});
  first.add_eval_seconds(1.5);
  EXPECT_EQ(first.add_eval_seconds(2.0), 3.5);
  TrainMetrics resumed(run.recorder, c10::kCPU, nullptr, NonFinitePolicy::skip, 60, {});
  resumed.load_state_dict(first.state_dict());
  EXPECT_EQ(resumed.add_eval_seconds(0.5), 4.0);
}

}  // namespace
}  // namespace orchestrate

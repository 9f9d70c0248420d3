// The window of updates between two log points: rows written early by the
// clock (write_rows) still count in the log point's mean loss, the log point
// returns train/loss, train/learning_rate and train/top1 for the caller to
// record, and every row reaches the store once.
#include "engine/train/log_window.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "store/run_store_test_support.h"

namespace orchestrate {
namespace {

double metric(const MetricValues& metrics, const std::string& name) {
  for (const auto& [key, value] : metrics)
    if (key == name) return value;
  return -1;
}

void add_update(LogWindow& window, PhaseTimer& timer, std::int64_t step, double loss) {
  timer.compute_begins();
  timer.compute_ends();
  timer.optimizer_ends();
  StepTiming row;
  row.step = step;
  row.epoch = 1;
  row.images = 4;
  row.learning_rate = 0.1 * static_cast<double>(step);
  window.add_update(row, at::scalar_tensor(loss));
}

TEST(LogWindow, RowsWrittenEarlyStillCountInTheLogPointsMean) {
  testing::ScratchRun run;
  PhaseTimer timer(c10::kCPU);
  LogWindow window(run.recorder, timer);
  // Two of four images right: logits pick class 0, labels 0, 1, 0, 1.
  auto logits = at::zeros({4, 2});
  logits.select(1, 0).fill_(1.0);
  window.count_hits(logits, at::tensor({0, 1, 0, 1}, at::kLong));
  add_update(window, timer, 1, 1.0);
  add_update(window, timer, 2, 2.0);
  const auto early = window.write_rows();
  EXPECT_EQ(early.rows.size(), 2U);
  EXPECT_TRUE(early.metrics.empty()) << "metrics wait for the log point";
  EXPECT_FALSE(window.empty());

  add_update(window, timer, 3, 3.0);
  const auto point = window.flush();
  EXPECT_EQ(point.last_step, 3);
  EXPECT_DOUBLE_EQ(point.mean_loss, 2.0) << "over all three updates";
  EXPECT_DOUBLE_EQ(metric(point.metrics, "train/loss"), 2.0);
  EXPECT_NEAR(metric(point.metrics, "train/learning_rate"), 0.3, 1e-12) << "the last update's";
  EXPECT_DOUBLE_EQ(metric(point.metrics, "train/top1"), 0.5);
  EXPECT_TRUE(window.empty());
  run.store.flush();
  const auto rows = run.store.step_timings(run.id);
  ASSERT_EQ(rows.size(), 3U) << "each row once";
  EXPECT_DOUBLE_EQ(rows[2].loss, 3.0);
}

}  // namespace
}  // namespace orchestrate

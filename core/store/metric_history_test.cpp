#include "store/metric_history.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <thread>

#include "orchestrate/testing/scratch_dir.h"
#include "store/run_store.h"
#include "store/run_store_test_support.h"

namespace orchestrate {
namespace {

TEST(MetricHistoryTest, ReadsEveryValueOfEachMetricInStepOrderWithItsTime) {
  testing::ScratchDir dir;
  const std::string path = dir.file("runs.db");
  std::int64_t run = 0, other = 0;
  {
    RunStore store(path);
    run = store.begin_run(testing::sample_run());
    other = store.begin_run(testing::sample_run("other"));
    store.record_metric(run, 20, 2, "train/loss", 0.5);
    store.record_metric(run, 10, 1, "train/loss", 0.9);
    store.record_metric(run, 10, 1, "eval/top1", std::numeric_limits<double>::quiet_NaN());
    store.record_metric(other, 10, 1, "train/loss", 7.0);
    store.finish_run(run, RunStatus::finished);
    store.finish_run(other, RunStatus::finished);
  }
  const MetricHistory history = read_metric_history(path, run);
  ASSERT_EQ(history.size(), 2u);
  const auto& loss = history.at("train/loss");
  ASSERT_EQ(loss.size(), 2u) << "the other run's value is not this run's";
  EXPECT_EQ(loss[0].step, 10);
  EXPECT_EQ(loss[0].epoch, 1);
  EXPECT_DOUBLE_EQ(loss[0].value, 0.9);
  EXPECT_EQ(loss[1].step, 20);
  EXPECT_DOUBLE_EQ(loss[1].value, 0.5);
  EXPECT_TRUE(std::isnan(history.at("eval/top1")[0].value)) << "a NaN reads back as NaN";
  // Recorded just now: after 2020, and within a minute of the run's start.
  EXPECT_GT(loss[0].wall_time, 1.58e9);
  EXPECT_GE(loss[0].seconds_since_start, 0.0);
  EXPECT_LT(loss[0].seconds_since_start, 60.0);
  EXPECT_TRUE(read_metric_history(path, 999).empty());
}

// record_metrics: several values of one step, each readable as if recorded alone.
TEST(MetricHistoryTest, MetricsRecordedTogetherReadBackOneByOne) {
  testing::ScratchDir dir;
  const std::string path = dir.file("runs.db");
  std::int64_t run = 0;
  {
    RunStore store(path);
    run = store.begin_run(testing::sample_run());
    store.record_metrics(run, 30, 3, {{"train/loss", 0.25}, {"train/top1", 0.875}, {"train/reg_loss", 0.0}});
    store.record_metrics(run, 40, 4, {});
    store.finish_run(run, RunStatus::finished);
  }
  const MetricHistory history = read_metric_history(path, run);
  ASSERT_EQ(history.size(), 3u);
  for (const auto& [name, value] : std::map<std::string, double>{{"train/loss", 0.25}, {"train/top1", 0.875},
                                                                 {"train/reg_loss", 0.0}}) {
    ASSERT_EQ(history.at(name).size(), 1u) << name;
    EXPECT_EQ(history.at(name)[0].step, 30) << name;
    EXPECT_EQ(history.at(name)[0].epoch, 3) << name;
    EXPECT_DOUBLE_EQ(history.at(name)[0].value, value) << name;
  }
}

// A log point's metrics reach other readers within moments, written by the
// store's thread, not by the training thread and not only at the next flush.
TEST(MetricHistoryTest, MetricsOfARunningRunAreWrittenSoonWithoutAFlush) {
  testing::ScratchDir dir;
  const std::string path = dir.file("runs.db");
  RunStore store(path);
  const std::int64_t run = store.begin_run(testing::sample_run());
  store.set_flush_interval(std::chrono::hours(1));  // only the metrics' own write can show them
  store.record_metrics(run, 5, 0, {{"train/loss", 1.5}});
  const auto give_up_at = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  MetricHistory history;
  while (history.empty() && std::chrono::steady_clock::now() < give_up_at) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    history = read_metric_history(path, run);
  }
  ASSERT_EQ(history.count("train/loss"), 1u) << "not written within 10 s (the delay is " << RunStore::kMetricWriteDelay.count() << " s)";
  EXPECT_DOUBLE_EQ(history.at("train/loss")[0].value, 1.5);
  store.finish_run(run, RunStatus::finished);
}

TEST(MetricHistoryTest, AMissingFileIsAnErrorNamingIt) {
  testing::ScratchDir dir;
  const std::string path = dir.file("none.db");
  const std::string message = testing::error_message_of([&] { read_metric_history(path, 1); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

}  // namespace
}  // namespace orchestrate

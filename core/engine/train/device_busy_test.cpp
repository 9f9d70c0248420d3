// DeviceBusy's sampling with a reader standing in for NVML (which needs a
// GPU: gpu_checks small reads the recorded share back): readings only after
// the first step and outside pauses, the first after each dropped, the mean
// recorded as the run's metric with an event saying how it was taken.
#include "engine/train/device_busy.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "store/run_records.h"
#include "store/run_store_test_support.h"

namespace orchestrate {
namespace {

constexpr std::chrono::milliseconds kTestPeriod{2};

// Waits (up to 10 s) until `done` holds.
template <class Done>
bool eventually(Done done) {
  const auto give_up_at = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up_at) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(DeviceBusy, ReadsOnlyBetweenTheFirstStepAndTheEndOutsidePauses) {
  std::atomic<int> reads{0};
  std::atomic<double> percent{40};
  DeviceBusy busy(
      [&]() -> std::optional<double> {
        ++reads;
        return percent.load();
      },
      "a test reader", kTestPeriod);
  std::this_thread::sleep_for(10 * kTestPeriod);
  EXPECT_EQ(reads.load(), 0) << "nothing before the first step ends";
  EXPECT_FALSE(busy.mean_share().has_value());

  busy.step_done();
  ASSERT_TRUE(eventually([&] { return busy.readings() >= 3; }));
  EXPECT_GE(reads.load(), 4) << "the first reading after the first step is dropped";
  {
    const DeviceBusy::Pause evaluating(busy);
    const std::size_t before = busy.readings();
    const int reads_before = reads.load();
    percent = 90;  // what the device does during evaluation does not count
    std::this_thread::sleep_for(10 * kTestPeriod);
    EXPECT_EQ(busy.readings(), before) << "none while paused";
    EXPECT_LE(reads.load(), reads_before + 1) << "at most one read already under way";
    percent = 40;
  }
  const std::size_t after_pause = busy.readings();
  ASSERT_TRUE(eventually([&] { return busy.readings() >= after_pause + 3; }));
  ASSERT_TRUE(busy.mean_share().has_value());
  EXPECT_NEAR(*busy.mean_share(), 0.40, 1e-9) << "every reading counted was taken outside the pause";
}

TEST(DeviceBusy, RecordsTheMeanAsTheRunsMetricAndSaysHow) {
  testing::ScratchRun run;
  DeviceBusy busy([]() -> std::optional<double> { return 25.0; }, "a test reader", kTestPeriod);
  busy.step_done();
  ASSERT_TRUE(eventually([&] { return busy.readings() >= 2; }));
  busy.record(run.recorder, 30);
  const std::size_t recorded = busy.readings();
  std::this_thread::sleep_for(10 * kTestPeriod);
  EXPECT_EQ(busy.readings(), recorded) << "record stops the sampling";
  run.store.flush();
  const auto summary = run.store.find_run(std::to_string(run.id));
  ASSERT_TRUE(summary.has_value());
  EXPECT_DOUBLE_EQ(summary->final_metrics.at(kDeviceBusyMetric), 0.25);
  bool said = false;
  for (const auto& event : run.store.events(run.id)) {
    if (event.kind != "device_busy") continue;
    said = true;
    EXPECT_NE(event.message.find("the GPU ran kernels 25 % of the training time (a test reader, the mean of "),
              std::string::npos)
        << event.message;
  }
  EXPECT_TRUE(said);
}

TEST(DeviceBusy, WithoutAReaderOrAReadingNothingIsRecorded) {
  testing::ScratchRun run;
  DeviceBusy none({}, "NVML");
  none.step_done();
  none.record(run.recorder, 5);
  DeviceBusy unreadable([]() -> std::optional<double> { return std::nullopt; }, "NVML", kTestPeriod);
  unreadable.step_done();
  std::this_thread::sleep_for(10 * kTestPeriod);
  unreadable.record(run.recorder, 5);
  run.store.flush();
  EXPECT_EQ(run.store.find_run(std::to_string(run.id))->final_metrics.count(kDeviceBusyMetric), 0U);
  for (const auto& event : run.store.events(run.id)) EXPECT_NE(event.kind, "device_busy");
}

// Without a GPU or the driver's NVML (this CPU machine) every reading is
// none, and the run records nothing; with them, a reading is a percent.
TEST(DeviceBusy, NvmlReadsAPercentOrNothing) {
  const DeviceBusy::Reader reader = nvml_busy_reader(0);
  ASSERT_TRUE(reader);
  const auto reading = reader();
  EXPECT_EQ(reading.has_value(), nvml_answers(0));
  if (!reading) return;
  EXPECT_GE(*reading, 0);
  EXPECT_LE(*reading, 100);
}

}  // namespace
}  // namespace orchestrate

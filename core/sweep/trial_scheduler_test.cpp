// ASHA and the median rule decide as Ray Tune's schedulers do, for max and min.
#include "sweep/trial_scheduler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace orchestrate::sweep {
namespace {

EarlyStopping asha(std::int64_t grace, std::int64_t factor) {
  EarlyStopping stopping;
  stopping.scheduler = Scheduler::asha;
  stopping.grace = grace;
  stopping.reduction_factor = factor;
  return stopping;
}

TEST(TrialSchedulerTest, RungsAreGraceTimesPowersOfTheReductionFactor) {
  const TrialScheduler scheduler(asha(2, 3), Mode::max);
  EXPECT_EQ(scheduler.rung_length(0), 2);
  EXPECT_EQ(scheduler.rung_length(1), 6);
  EXPECT_EQ(scheduler.rung_length(2), 18);
  EXPECT_EQ(scheduler.rung_length(60), -1) << "past 64 bits: never reached";
}

TEST(TrialSchedulerTest, AshaKeepsTheTopThirdOfWhatArrivedBefore) {
  TrialScheduler scheduler(asha(1, 3), Mode::max);
  EXPECT_TRUE(scheduler.reached(0, 0, 0.50)) << "the first at a rung goes on";
  EXPECT_TRUE(scheduler.reached(1, 0, 0.60)) << "0.60 >= the 2/3 quantile of {0.50}";
  EXPECT_FALSE(scheduler.reached(2, 0, 0.55)) << "below the 2/3 quantile of {0.50, 0.60}: 0.5667";
  EXPECT_TRUE(scheduler.reached(3, 0, 0.58)) << "{0.50, 0.55, 0.60}: quantile 0.5667";
  EXPECT_FALSE(scheduler.reached(4, 0, 0.56));
  EXPECT_TRUE(scheduler.reached(1, 1, 0.61)) << "rung 1 is a rung of its own: first there";
  EXPECT_FALSE(scheduler.reached(2, 0, 0.99)) << "a rung reported again keeps its first decision";
}

TEST(TrialSchedulerTest, AshaForAMinimisedMetricKeepsTheLowest) {
  TrialScheduler scheduler(asha(1, 2), Mode::min);
  EXPECT_TRUE(scheduler.reached(0, 0, 0.9));
  EXPECT_TRUE(scheduler.reached(1, 0, 0.4));
  EXPECT_FALSE(scheduler.reached(2, 0, 0.8)) << "worse than the median of {0.9, 0.4} for min: 0.65";
  EXPECT_TRUE(scheduler.reached(3, 0, 0.5));
}

TEST(TrialSchedulerTest, ANotANumberValueNeverGoesOnPastAnother) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  TrialScheduler scheduler(asha(1, 3), Mode::max);
  EXPECT_TRUE(scheduler.reached(0, 0, nan)) << "alone, as Ray's nanpercentile of nothing cuts nothing";
  EXPECT_TRUE(scheduler.reached(1, 0, 0.1)) << "a number beats a NaN";
  EXPECT_FALSE(scheduler.reached(2, 0, nan));
}

TEST(TrialSchedulerTest, TheMedianRuleWaitsForMinSamplesThenStopsTheWorseHalf) {
  EarlyStopping median;
  median.scheduler = Scheduler::median;
  median.min_samples = 2;
  TrialScheduler scheduler(median, Mode::max);
  EXPECT_TRUE(scheduler.reached(0, 0, 0.2));
  EXPECT_TRUE(scheduler.reached(1, 0, 0.1)) << "one other: fewer than min_samples";
  EXPECT_FALSE(scheduler.reached(2, 0, 0.14)) << "median of {0.2, 0.1}: 0.15";
  EXPECT_TRUE(scheduler.reached(3, 0, 0.15));
}

TEST(TrialSchedulerTest, WithoutASchedulerEveryTrialGoesOn) {
  TrialScheduler scheduler(EarlyStopping{}, Mode::max);
  EXPECT_FALSE(scheduler.stops_early());
  for (int trial = 0; trial < 5; ++trial) EXPECT_TRUE(scheduler.reached(trial, 0, -trial));
}

}  // namespace
}  // namespace orchestrate::sweep

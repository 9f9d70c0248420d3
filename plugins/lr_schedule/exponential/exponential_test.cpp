#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "orchestrate/error.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/plugin.h"
#include "plugin_under_test.h"


namespace {

std::unique_ptr<orchestrate::LrSchedule> make_exponential(
    const orchestrate::ScheduleContext& context, const std::function<void(orchestrate::Params&)>& customize = {}) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.lr_schedules().get("exponential");
  auto params = orchestrate::default_params(entry.info.schema);
  if (customize) customize(params);
  return entry.create(params, context);
}

TEST(ExponentialSchedule, DefaultsDecayBy94PercentPerEpochInSteps) {
  const auto schedule = make_exponential({0.1, 100, 1000});
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), 0.1);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(99), 0.1);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(100), 0.1 * 0.94);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(250), 0.1 * 0.94 * 0.94);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(1000), 0.1 * std::pow(0.94, 10));
}

TEST(ExponentialSchedule, PeriodCanSpanSeveralEpochs) {
  const auto schedule = make_exponential({0.1, 100, 1000}, [](orchestrate::Params& p) {
    p.set("decay_rate", 0.5);
    p.set("decay_every", 2.0);
  });
  EXPECT_DOUBLE_EQ(schedule->learning_rate(199), 0.1);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(200), 0.05);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(399), 0.05);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(400), 0.025);
}

TEST(ExponentialSchedule, WithoutStaircaseDecaysContinuously) {
  const auto schedule = make_exponential({0.1, 100, 1000}, [](orchestrate::Params& p) {
    p.set("decay_rate", 0.5);
    p.set("staircase", false);
  });
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), 0.1);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(50), 0.1 * std::sqrt(0.5));
  EXPECT_DOUBLE_EQ(schedule->learning_rate(150), 0.1 * std::pow(0.5, 1.5));
}

TEST(ExponentialSchedule, StepUnitIgnoresEpochLength) {
  const auto schedule = make_exponential({0.2, 100, 1000}, [](orchestrate::Params& p) {
    p.set("unit", std::string("step"));
    p.set("decay_every", 10.0);
    p.set("decay_rate", 0.5);
  });
  EXPECT_DOUBLE_EQ(schedule->learning_rate(9), 0.2);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(10), 0.1);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(25), 0.05);
}

// 0.1 epoch of 3 steps is 0.30000000000000004 steps in floating point; step 3
// (one epoch, ten periods) must still be in the tenth period, not the ninth.
TEST(ExponentialSchedule, FractionalPeriodsEndOnTheRightStep) {
  const auto schedule = make_exponential({1.0, 3, 30}, [](orchestrate::Params& p) {
    p.set("decay_every", 0.1);
    p.set("decay_rate", 0.5);
  });
  EXPECT_DOUBLE_EQ(schedule->learning_rate(3), std::pow(0.5, 10));
  EXPECT_DOUBLE_EQ(schedule->learning_rate(6), std::pow(0.5, 20));
}

TEST(ExponentialSchedule, SchemaRejectsZeroPeriodOrRate) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& schema = registry.lr_schedules().get("exponential").info.schema;
  EXPECT_EQ(schema.find("decay_every")->check(0.0), "must be > 0");
  EXPECT_EQ(schema.find("decay_rate")->check(0.0), "must be > 0");
  EXPECT_EQ(schema.find("decay_rate")->check(1.0), "");
  EXPECT_EQ(schema.find("decay_rate")->range_text(), "(0, 1]");
}

}  // namespace

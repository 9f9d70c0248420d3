#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "../testing/lr_schedule_testing.h"
#include "orchestrate/error.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/plugin.h"
#include "orchestrate/testing/plugin_under_test.h"

namespace {

using orchestrate::testing::rates_match;
using orchestrate::testing::rates_of;

// torch's ExponentialLR and StepLR compute each rate from the previous one
// (x gamma per step or per step_size); over 500 steps that stays within
// 1e-13 of the closed form, so 1e-12 still catches a period off by one step.
const orchestrate::testing::TorchReference& torch_reference() {
  static const orchestrate::testing::TorchReference reference({
      {"x0.99 per step", "ExponentialLR(optimizer, gamma=0.99)", 0.1, 500},
      {"x0.5 every 30", "StepLR(optimizer, step_size=30, gamma=0.5)", 0.2, 500},
      {"x0.94 every 100", "StepLR(optimizer, step_size=100, gamma=0.94)", 0.1, 500},
  });
  return reference;
}

std::unique_ptr<orchestrate::LrSchedule> make_exponential(
    const orchestrate::ScheduleContext& context, const std::function<void(orchestrate::Params&)>& customize = {}) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.lr_schedules().get("exponential");
  auto params = orchestrate::default_params(entry.info.schema);
  if (customize) customize(params);
  return entry.create(params, context);
}

TEST(ExponentialSchedule, EveryStepMatchesTorchExponentialLr) {
  for (const bool staircase : {true, false}) {
    const auto schedule = make_exponential({0.1, 100, 500}, [&](orchestrate::Params& p) {
      p.set("decay_rate", 0.99);
      p.set("decay_every", 1.0);
      p.set("unit", std::string("step"));
      p.set("staircase", staircase);
    });
    EXPECT_TRUE(rates_match(rates_of(*schedule, 500), torch_reference().rates("x0.99 per step"), 1e-12))
        << "staircase " << staircase;
  }
}

TEST(ExponentialSchedule, StaircaseMatchesTorchStepLr) {
  const auto in_steps = make_exponential({0.2, 100, 500}, [](orchestrate::Params& p) {
    p.set("decay_rate", 0.5);
    p.set("decay_every", 30.0);
    p.set("unit", std::string("step"));
  });
  EXPECT_TRUE(rates_match(rates_of(*in_steps, 500), torch_reference().rates("x0.5 every 30"), 1e-12));
  // The defaults: x0.94 every epoch of 100 steps.
  const auto in_epochs = make_exponential({0.1, 100, 500});
  EXPECT_TRUE(rates_match(rates_of(*in_epochs, 500), torch_reference().rates("x0.94 every 100"), 1e-12));
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

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "../testing/lr_schedule_testing.h"
#include "orchestrate/error.h"

namespace {

using orchestrate::Params;
using orchestrate::testing::make_schedule;
using orchestrate::testing::rule_problems;

// MoXing's config_lr from the ResNet-50 DGC recipe (seeds/moxing_lars32k_dgc.txt),
// written out for "5:0.001->0.4,30:0.4,60:0.04,80:0.004,90:0.0004":
//   step <= warmup end: warmup lr (linear, or TF exponential_decay without staircase)
//   else tf.train.piecewise_constant(step, [30, 60, 80] x steps per epoch,
//                                    [0.4, 0.04, 0.004, 0.0004]), which keeps
//        values[i] while step <= boundaries[i]
double moxing_config_lr(std::int64_t step, std::int64_t steps_per_epoch, bool exponential_warmup) {
  const double warmup_steps = 5.0 * static_cast<double>(steps_per_epoch);
  const double t = static_cast<double>(step);
  if (!(t > warmup_steps)) {
    if (exponential_warmup) return 0.001 * std::pow(0.4 / 0.001, t / warmup_steps);
    return 0.001 + (0.4 - 0.001) * (t / warmup_steps);
  }
  const std::vector<std::int64_t> boundaries{30 * steps_per_epoch, 60 * steps_per_epoch, 80 * steps_per_epoch};
  const std::vector<double> values{0.4, 0.04, 0.004, 0.0004};
  for (std::size_t i = 0; i < boundaries.size(); ++i)
    if (step <= boundaries[i]) return values[i];
  return values.back();
}

// Compares with MoXing step by step. The only difference is documented in
// strategy.cpp: at a stage's end step MoXing still gives that stage's lr
// (piecewise_constant's `<=`), here the next stage has begun.
void expect_moxing_rates(bool exponential_warmup) {
  constexpr std::int64_t kStepsPerEpoch = 10;
  const auto schedule = make_schedule("strategy", {0.1, kStepsPerEpoch, 950}, [&](Params& p) {
    p.set("stages", std::string("5:0.001->0.4,30:0.4,60:0.04,80:0.004,90:0.0004"));
    p.set("ramp", std::string(exponential_warmup ? "exponential" : "linear"));
  });
  const std::set<std::int64_t> stage_ends{300, 600, 800};
  for (std::int64_t step = 0; step < 950; ++step) {
    const double expected = stage_ends.count(step) ? moxing_config_lr(step + 1, kStepsPerEpoch, exponential_warmup)
                                                   : moxing_config_lr(step, kStepsPerEpoch, exponential_warmup);
    ASSERT_NEAR(schedule->learning_rate(step), expected, 1e-12 * expected) << "step " << step;
  }
}

TEST(StrategySchedule, ExponentialWarmupMatchesMoxingDgcRecipe) {
  expect_moxing_rates(true);
  const auto schedule = make_schedule("strategy", {0.1, 10, 950}, [](Params& p) {
    p.set("stages", std::string("5:0.001->0.4,30:0.4,60:0.04,80:0.004,90:0.0004"));
    p.set("ramp", std::string("exponential"));
  });
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), 0.001);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(25), 0.001 * std::sqrt(400.0));  // half way: geometric mean
  EXPECT_DOUBLE_EQ(schedule->learning_rate(50), 0.4);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(299), 0.4);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(300), 0.04);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(899), 0.0004);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(100000), 0.0004);
}

TEST(StrategySchedule, LinearWarmupMatchesMoxing) {
  expect_moxing_rates(false);
  const auto schedule = make_schedule("strategy", {0.1, 10, 950}, [](Params& p) {
    p.set("stages", std::string("5:0.001->0.4,30:0.4,60:0.04,80:0.004,90:0.0004"));
  });
  EXPECT_DOUBLE_EQ(schedule->learning_rate(25), (0.001 + 0.4) / 2);
}

// MoXing's default flag value; a single piecewise_constant, no warmup.
TEST(StrategySchedule, DefaultsAreMoxingsDefaultStrategy) {
  const auto schedule = make_schedule("strategy", {0.5, 100, 9000});
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), 0.1);  // absolute: the optimizer's 0.5 is replaced
  EXPECT_DOUBLE_EQ(schedule->learning_rate(2999), 0.1);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(3000), 0.01);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(5999), 0.01);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(6000), 0.001);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(8000), 0.0001);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(9000), 0.0001);
}

TEST(StrategySchedule, AnyStageMayRampAndSpacesAreAllowed) {
  const auto schedule = make_schedule("strategy", {0.1, 10, 100}, [](Params& p) {
    p.set("stages", std::string(" 10 : 0.5 , 30 : 0.5 -> 0.1 "));
    p.set("unit", std::string("step"));
  });
  EXPECT_DOUBLE_EQ(schedule->learning_rate(9), 0.5);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(10), 0.5);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(20), 0.3);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(29), 0.5 - 0.4 * 19 / 20);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(30), 0.1);  // after the last stage its last lr holds
  EXPECT_DOUBLE_EQ(schedule->learning_rate(1000), 0.1);
}

// 2.2 epochs x 25 steps is 55.00000000000001 in floating point; the stage
// must still end on step 55.
TEST(StrategySchedule, FractionalEpochEndsLandOnTheRightStep) {
  const auto schedule = make_schedule("strategy", {0.1, 25, 300}, [](Params& p) {
    p.set("stages", std::string("2.2:1.0,4:0.5"));
  });
  EXPECT_DOUBLE_EQ(schedule->learning_rate(54), 1.0);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(55), 0.5);
}

// What the recipe's author sees for a bad stages text (with the table's
// file:line in front, added by the host).
std::string problem_of(const std::string& stages, const std::string& ramp = "linear") {
  return rule_problems("strategy", [&](Params& p) {
    p.set("stages", stages);
    p.set("ramp", ramp);
  });
}

constexpr const char* kHowToWrite = "write END:LR or END:LR_START->LR_END, e.g. \"30:0.4\" or \"5:0.001->0.4\"";

TEST(StrategySchedule, MalformedStagesNameTheStageAndHowToWriteIt) {
  EXPECT_EQ(problem_of("5:0.1,30:abc"), std::string("stage 2 \"30:abc\": lr \"abc\" is not a number; ") + kHowToWrite);
  EXPECT_EQ(problem_of("x:0.1"), std::string("stage 1 \"x:0.1\": end \"x\" is not a number; ") + kHowToWrite);
  EXPECT_EQ(problem_of("30-0.1"), std::string("stage 1 \"30-0.1\": no ':' between end and lr; ") + kHowToWrite);
  EXPECT_EQ(problem_of("5:0.001->,30:0.4"),
            std::string("stage 1 \"5:0.001->\": lr_end \"\" is not a number; ") + kHowToWrite);
  EXPECT_EQ(problem_of("5:a->0.4"), std::string("stage 1 \"5:a->0.4\": lr_start \"a\" is not a number; ") + kHowToWrite);
  EXPECT_EQ(problem_of("30:0.1,,60:0.01"),
            std::string("stage 2 \"\": empty; remove the extra comma or ") + kHowToWrite);
  EXPECT_EQ(problem_of("30:0.1,60:nan"), std::string("stage 2 \"60:nan\": lr \"nan\" is not a number; ") + kHowToWrite);
  EXPECT_EQ(problem_of("30:0.1:0.2"), std::string("stage 1 \"30:0.1:0.2\": lr \"0.1:0.2\" is not a number; ") + kHowToWrite);
  EXPECT_EQ(problem_of(" "), std::string("no stages; ") + kHowToWrite + ", several separated by commas");
}

TEST(StrategySchedule, StageEndsMustIncreaseFromAboveZero) {
  EXPECT_EQ(problem_of("30:0.1,20:0.01"),
            "stage 2 \"20:0.01\": ends at 20, not after stage 1's end 30; stage ends must increase");
  EXPECT_EQ(problem_of("30:0.1,30:0.01"),
            "stage 2 \"30:0.01\": ends at 30, not after stage 1's end 30; stage ends must increase");
  EXPECT_EQ(problem_of("0:0.1,30:0.01"), "stage 1 \"0:0.1\": ends at 0; the first stage must end after 0");
}

TEST(StrategySchedule, LearningRatesMustNotBeNegative) {
  EXPECT_EQ(problem_of("30:0.1,60:-0.01"),
            "stage 2 \"60:-0.01\": lr -0.01 is negative; learning rates must be >= 0");
  EXPECT_EQ(problem_of("5:0.1->-1"), "stage 1 \"5:0.1->-1\": lr -1 is negative; learning rates must be >= 0");
}

TEST(StrategySchedule, ExponentialRampsCannotStartOrEndAtZero) {
  EXPECT_EQ(problem_of("5:0->0.4,30:0.4"), "");
  EXPECT_EQ(problem_of("5:0->0.4,30:0.4", "exponential"),
            "stage 1 \"5:0->0.4\": an exponential ramp multiplies its lr, so it cannot start or end at 0; "
            "give both lrs > 0 or use ramp = \"linear\"");
}

TEST(StrategySchedule, BuildingFromABadTextIsARecipeError) {
  try {
    make_schedule("strategy", {0.1, 10, 100}, [](Params& p) { p.set("stages", std::string("5:0.1,30:abc")); });
    FAIL() << "built from a bad stages text";
  } catch (const orchestrate::RecipeError& error) {
    EXPECT_EQ(std::string(error.what()),
              std::string("[schedule] strategy: stage 2 \"30:abc\": lr \"abc\" is not a number; ") + kHowToWrite);
  }
}

TEST(StrategySchedule, DefaultsPassTheRules) { EXPECT_EQ(rule_problems("strategy", [](Params&) {}), ""); }

}  // namespace

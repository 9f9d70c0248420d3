#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/plugin.h"
#include "plugin_under_test.h"


namespace {

std::unique_ptr<orchestrate::LrSchedule> make_piecewise(const orchestrate::ScheduleContext& context,
                                                        std::vector<double> boundaries, std::vector<double> factors,
                                                        const std::string& unit = "epoch") {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.lr_schedules().get("piecewise");
  auto params = orchestrate::default_params(entry.info.schema);
  params.set("boundaries", std::move(boundaries));
  params.set("factors", std::move(factors));
  params.set("unit", unit);
  return entry.create(params, context);
}

// The error message of building a schedule, or "" if it builds.
std::string error_of(std::vector<double> boundaries, std::vector<double> factors) {
  try {
    make_piecewise({0.1, 100, 1000}, std::move(boundaries), std::move(factors));
  } catch (const orchestrate::RecipeError& error) {
    return error.what();
  }
  return "";
}

TEST(PiecewiseSchedule, DefaultsKeepTheBaseLr) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.lr_schedules().get("piecewise");
  const auto schedule = entry.create(orchestrate::default_params(entry.info.schema), {0.1, 100, 1000});
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), 0.1);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(1000), 0.1);
}

TEST(PiecewiseSchedule, EachBoundaryIsTheFirstStepOfTheNextFactor) {
  const auto schedule = make_piecewise({0.4, 100, 1000}, {2, 5}, {1.0, 0.1, 0.01});
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), 0.4);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(199), 0.4);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(200), 0.4 * 0.1);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(499), 0.4 * 0.1);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(500), 0.4 * 0.01);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(1000000), 0.4 * 0.01);
}

TEST(PiecewiseSchedule, StepBoundariesBetweenStepsRoundUp) {
  const auto schedule = make_piecewise({1.0, 100, 1000}, {10, 10.5}, {1.0, 0.5, 0.25}, "step");
  EXPECT_DOUBLE_EQ(schedule->learning_rate(9), 1.0);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(10), 0.5);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(11), 0.25);
}

// 2.2 epochs x 25 steps is 55.00000000000001 in floating point; the boundary
// must still fall on step 55.
TEST(PiecewiseSchedule, FractionalEpochBoundariesLandOnTheRightStep) {
  const auto schedule = make_piecewise({1.0, 25, 300}, {2.2}, {1.0, 0.5});
  EXPECT_DOUBLE_EQ(schedule->learning_rate(54), 1.0);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(55), 0.5);
}

TEST(PiecewiseSchedule, FactorsNeedOneEntryPerInterval) {
  const auto message = error_of({30, 60}, {1.0, 0.1});
  EXPECT_NE(message.find("2 boundaries make 3 intervals, so factors needs 3 entries, one per interval, but has 2"),
            std::string::npos)
      << message;
  EXPECT_NE(error_of({}, {}).find("needs 1 entries"), std::string::npos);
}

TEST(PiecewiseSchedule, BoundariesMustBeStrictlyAscending) {
  const auto message = error_of({30, 60, 60}, {1.0, 0.1, 0.01, 0.001});
  EXPECT_NE(message.find("strictly ascending, but [30, 60, 60] has 60 after 60"), std::string::npos) << message;
  EXPECT_NE(error_of({60, 30}, {1.0, 0.1, 0.01}).find("has 30 after 60"), std::string::npos);
}

}  // namespace

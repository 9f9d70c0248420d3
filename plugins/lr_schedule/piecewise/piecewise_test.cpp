#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "../testing/lr_schedule_testing.h"
#include "orchestrate/error.h"

namespace {

using orchestrate::Params;
using orchestrate::testing::make_schedule;
using orchestrate::testing::rates_match;
using orchestrate::testing::rates_of;
using orchestrate::testing::rule_problems;

std::unique_ptr<orchestrate::LrSchedule> make_piecewise(const orchestrate::ScheduleContext& context,
                                                        std::vector<double> boundaries, std::vector<double> factors,
                                                        const std::string& unit = "epoch") {
  return make_schedule("piecewise", context, [&](Params& p) {
    p.set("boundaries", std::move(boundaries));
    p.set("factors", std::move(factors));
    p.set("unit", unit);
  });
}

// What the schema's rules say (the host reports it when the recipe loads),
// or "" when fine.
std::string error_of(std::vector<double> boundaries, std::vector<double> factors, std::vector<double> values = {}) {
  return rule_problems("piecewise", [&](Params& p) {
    p.set("boundaries", boundaries);
    p.set("factors", factors);
    p.set("values", values);
  });
}

// torch's MultiStepLR multiplies by gamma at each milestone, computing each
// rate from the previous one: a product of at most two factors here, within
// 1e-15 of the closed form.
const orchestrate::testing::TorchReference& torch_reference() {
  static const orchestrate::testing::TorchReference reference({
      {"x0.1 at 40 and 100", "MultiStepLR(optimizer, milestones=[40, 100], gamma=0.1)", 0.4, 300},
  });
  return reference;
}

TEST(PiecewiseSchedule, DefaultsKeepTheBaseLr) {
  const auto schedule = make_schedule("piecewise", {0.1, 100, 1000});
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

TEST(PiecewiseSchedule, MatchesTorchMultiStepLr) {
  const auto schedule = make_piecewise({0.4, 20, 300}, {2, 5}, {1.0, 0.1, 0.01});
  EXPECT_TRUE(rates_match(rates_of(*schedule, 300), torch_reference().rates("x0.1 at 40 and 100"), 1e-12));
}

TEST(PiecewiseSchedule, ValuesAreAbsoluteLearningRates) {
  const auto schedule = make_schedule("piecewise", {0.4, 100, 1000}, [](Params& p) {
    p.set("boundaries", std::vector<double>{30, 60});
    p.set("values", std::vector<double>{0.1, 0.01, 0.001});
  });
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), 0.1);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(2999), 0.1);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(3000), 0.01);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(6000), 0.001);
}

TEST(PiecewiseSchedule, FactorsOrValuesNeedOneEntryPerInterval) {
  EXPECT_EQ(error_of({30, 60}, {1.0, 0.1}),
            "2 boundaries make 3 intervals, so factors needs 3 entries, one per interval, but has 2");
  EXPECT_EQ(error_of({30}, {}, {0.1, 0.01, 0.001}),
            "1 boundary makes 2 intervals, so values needs 2 entries, one per interval, but has 3");
  EXPECT_EQ(error_of({}, {1.0, 0.1}), "0 boundaries make 1 interval, so factors needs 1 entry, one per interval, but has 2");
  EXPECT_EQ(error_of({}, {}), "");
  EXPECT_EQ(error_of({5}, {1.0, 0.2}), "");  // recipes/fashion_mnist.toml
}

TEST(PiecewiseSchedule, BoundariesNeedFactorsOrValuesButNotBoth) {
  EXPECT_EQ(error_of({30}, {}),
            "1 boundary makes 2 intervals; give factors (multiples of the optimizer's lr) or values (absolute lrs), "
            "2 entries, one per interval");
  EXPECT_EQ(error_of({30}, {1.0, 0.1}, {0.1, 0.01}),
            "factors (multiples of the optimizer's lr) and values (absolute lrs) are both given; keep one of them");
}

TEST(PiecewiseSchedule, BoundariesMustBeStrictlyAscending) {
  EXPECT_EQ(error_of({30, 60, 60}, {1.0, 0.1, 0.01, 0.001}),
            "boundaries must be strictly ascending, but [30, 60, 60] has 60 after 60");
  EXPECT_NE(error_of({60, 30}, {1.0, 0.1, 0.01}).find("has 30 after 60"), std::string::npos);
}

// The rules run when a recipe loads; building anyway is still refused.
TEST(PiecewiseSchedule, BuildingFromBadParamsIsARecipeError) {
  try {
    make_piecewise({0.1, 100, 1000}, {30, 60}, {1.0, 0.1});
    FAIL() << "built with too few factors";
  } catch (const orchestrate::RecipeError& error) {
    EXPECT_EQ(std::string(error.what()),
              "[schedule] piecewise: 2 boundaries make 3 intervals, so factors needs 3 entries, one per interval, "
              "but has 2");
  }
}

}  // namespace

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../testing/lr_schedule_testing.h"

namespace {

using orchestrate::Params;
using orchestrate::testing::make_schedule;
using orchestrate::testing::rates_match;
using orchestrate::testing::rates_of;

// Every torch reference this file compares with. CosineAnnealingLR computes
// each rate from the previous one; over these few hundred steps that stays
// within 1e-14 of its closed form, so 1e-12 is tight enough to catch a step
// out of place.
const orchestrate::testing::TorchReference& torch_reference() {
  static const orchestrate::testing::TorchReference reference({
      {"to 0.001 over 300", "CosineAnnealingLR(optimizer, T_max=300, eta_min=0.001)", 0.1, 301},
      {"to 0 over 250", "CosineAnnealingLR(optimizer, T_max=250)", 0.4, 251},
  });
  return reference;
}

TEST(CosineSchedule, MatchesTorchCosineAnnealingLr) {
  const auto schedule = make_schedule("cosine", {0.1, 50, 1000}, [](Params& p) {
    p.set("end_lr", 0.001);
    p.set("decay_length", 300.0);
    p.set("unit", std::string("step"));
  });
  EXPECT_TRUE(rates_match(rates_of(*schedule, 301), torch_reference().rates("to 0.001 over 300"), 1e-12));
}

TEST(CosineSchedule, DefaultsAnnealToZeroOverTheWholeRunLikeTorch) {
  const auto schedule = make_schedule("cosine", {0.4, 25, 250});
  EXPECT_TRUE(rates_match(rates_of(*schedule, 251), torch_reference().rates("to 0 over 250"), 1e-12));
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), 0.4);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(125), 0.2);
  EXPECT_EQ(schedule->learning_rate(250), 0.0);
}

// torch's formula rises again after T_max; a finished decay stays finished.
TEST(CosineSchedule, HoldsEndLrAfterTheDecay) {
  const auto schedule = make_schedule("cosine", {0.1, 10, 1000}, [](Params& p) {
    p.set("end_lr", 0.002);
    p.set("decay_length", 3.0);  // epochs: 30 steps
  });
  EXPECT_DOUBLE_EQ(schedule->learning_rate(15), 0.002 + (0.1 - 0.002) / 2);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(30), 0.002);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(31), 0.002);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(1000000), 0.002);
}

TEST(CosineSchedule, NoStepsLeftGivesEndLr) {
  const auto schedule = make_schedule("cosine", {0.1, 10, 0}, [](Params& p) { p.set("end_lr", 0.01); });
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), 0.01);
}

}  // namespace

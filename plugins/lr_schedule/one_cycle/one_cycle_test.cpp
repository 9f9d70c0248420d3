#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "../testing/lr_schedule_testing.h"

namespace {

using orchestrate::Params;
using orchestrate::testing::make_schedule;
using orchestrate::testing::rates_match;
using orchestrate::testing::rates_of;
using orchestrate::testing::rule_problems;

// Every torch reference this file compares with. OneCycleLR computes each
// rate from its closed form, so the rates agree to rounding; 97 and 301 steps
// put the phase ends between steps (0.3 x 97 - 1 = 28.1).
const orchestrate::testing::TorchReference& torch_reference() {
  static const orchestrate::testing::TorchReference reference({
      {"defaults", "OneCycleLR(optimizer, max_lr=0.1, total_steps=300)", 0.1, 300},
      {"odd length", "OneCycleLR(optimizer, max_lr=0.4, total_steps=97)", 0.4, 97},
      {"linear", "OneCycleLR(optimizer, max_lr=0.1, total_steps=301, pct_start=0.25, anneal_strategy='linear', "
                 "div_factor=10.0, final_div_factor=100.0)",
       0.1, 301},
      {"three phases", "OneCycleLR(optimizer, max_lr=0.1, total_steps=300, pct_start=0.4, three_phase=True)", 0.1,
       300},
      {"three phases linear", "OneCycleLR(optimizer, max_lr=0.2, total_steps=97, anneal_strategy='linear', "
                              "three_phase=True)",
       0.2, 97},
  });
  return reference;
}

TEST(OneCycleSchedule, DefaultsMatchTorchOneCycleLr) {
  const auto schedule = make_schedule("one_cycle", {0.1, 30, 300});
  EXPECT_TRUE(rates_match(rates_of(*schedule, 300), torch_reference().rates("defaults"), 1e-12));
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), 0.1 / 25);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(89), 0.1);  // 0.3 x 300 - 1: the peak
  EXPECT_DOUBLE_EQ(schedule->learning_rate(299), 0.1 / 25 / 1e4);
}

TEST(OneCycleSchedule, PhaseEndsBetweenStepsMatchTorch) {
  const auto schedule = make_schedule("one_cycle", {0.4, 10, 97});
  EXPECT_TRUE(rates_match(rates_of(*schedule, 97), torch_reference().rates("odd length"), 1e-12));
}

TEST(OneCycleSchedule, LinearAnnealingMatchesTorch) {
  const auto schedule = make_schedule("one_cycle", {0.1, 10, 301}, [](Params& p) {
    p.set("pct_start", 0.25);
    p.set("anneal_strategy", std::string("linear"));
    p.set("div_factor", 10.0);
    p.set("final_div_factor", 100.0);
  });
  EXPECT_TRUE(rates_match(rates_of(*schedule, 301), torch_reference().rates("linear"), 1e-12));
}

TEST(OneCycleSchedule, ThreePhasesMatchTorch) {
  const auto cosine = make_schedule("one_cycle", {0.1, 10, 300}, [](Params& p) {
    p.set("pct_start", 0.4);
    p.set("three_phase", true);
  });
  EXPECT_TRUE(rates_match(rates_of(*cosine, 300), torch_reference().rates("three phases"), 1e-12));
  EXPECT_DOUBLE_EQ(cosine->learning_rate(238), 0.1 / 25);  // 2 x 0.4 x 300 - 2: back at the start
  const auto linear = make_schedule("one_cycle", {0.2, 10, 97}, [](Params& p) {
    p.set("anneal_strategy", std::string("linear"));
    p.set("three_phase", true);
  });
  EXPECT_TRUE(rates_match(rates_of(*linear, 97), torch_reference().rates("three phases linear"), 1e-12));
}

// OneCycleLR refuses to step past total_steps; a schedule must answer every step.
TEST(OneCycleSchedule, HoldsTheFinalLrAfterTheRun) {
  const auto schedule = make_schedule("one_cycle", {0.1, 10, 300}, [](Params& p) {
    p.set("anneal_strategy", std::string("linear"));
  });
  const double last = schedule->learning_rate(299);
  EXPECT_NEAR(last, 0.1 / 25 / 1e4, 1e-12 * 0.1);  // linear's from + (to - from) x 1 rounds, in torch too
  EXPECT_EQ(schedule->learning_rate(300), last);
  EXPECT_EQ(schedule->learning_rate(100000), last);
}

TEST(OneCycleSchedule, TinyRunsStayFinite) {
  for (const std::int64_t total : {0, 1, 2, 3}) {
    const auto schedule = make_schedule("one_cycle", {0.1, 1, total}, [](Params& p) { p.set("three_phase", true); });
    for (std::int64_t step = 0; step <= 4; ++step) {
      const double lr = schedule->learning_rate(step);
      EXPECT_TRUE(std::isfinite(lr) && lr > 0) << total << " steps, step " << step << ": " << lr;
    }
  }
}

TEST(OneCycleSchedule, ThreePhasesNeedPctStartUpToHalf) {
  EXPECT_EQ(rule_problems("one_cycle", [](Params& p) { p.set("three_phase", true); }), "");
  EXPECT_EQ(rule_problems("one_cycle", [](Params& p) { p.set("pct_start", 0.6); }), "");
  EXPECT_EQ(rule_problems("one_cycle",
                          [](Params& p) {
                            p.set("three_phase", true);
                            p.set("pct_start", 0.6);
                          }),
            "three_phase = true rises for pct_start and falls back for as long again, so pct_start must be <= 0.5, "
            "but is 0.6; lower pct_start or set three_phase = false");
}

}  // namespace

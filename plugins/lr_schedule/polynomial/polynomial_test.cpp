#include <gtest/gtest.h>

#include <algorithm>
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

// Every torch reference this file compares with.
const orchestrate::testing::TorchReference& torch_reference() {
  static const orchestrate::testing::TorchReference reference({
      {"power 2 over 300", "PolynomialLR(optimizer, total_iters=300, power=2.0)", 0.1, 400},
      {"power 1 over 250", "PolynomialLR(optimizer, total_iters=250, power=1.0)", 0.4, 300},
  });
  return reference;
}

// TF's tf.train.polynomial_decay (tensorflow/python/training/learning_rate_decay.py,
// as documented there), written out: the reference where torch has no end
// learning rate or cycle.
double tf_polynomial_decay(double lr, std::int64_t global_step, double decay_steps, double end_lr, double power,
                           bool cycle) {
  double step = static_cast<double>(global_step);
  if (cycle) {
    const double multiplier = global_step == 0 ? 1.0 : std::ceil(step / decay_steps);
    decay_steps *= multiplier;
  } else {
    step = std::min(step, decay_steps);
  }
  return (lr - end_lr) * std::pow(1 - step / decay_steps, power) + end_lr;
}

// torch's PolynomialLR is polynomial decay with end_lr 0. It computes each
// rate from the previous one, which here stays within 1e-14 of the closed
// form; 1e-12 leaves room and still catches any off-by-one step.
TEST(PolynomialSchedule, MatchesTorchPolynomialLrWhenEndLrIsZero) {
  const auto schedule = make_schedule("polynomial", {0.1, 50, 1000}, [](Params& p) {
    p.set("end_lr", 0.0);
    p.set("power", 2.0);
    p.set("decay_length", 300.0);
    p.set("unit", std::string("step"));
  });
  EXPECT_TRUE(rates_match(rates_of(*schedule, 400),
                          torch_reference().rates("power 2 over 300"), 1e-12));
}

TEST(PolynomialSchedule, DefaultLengthIsTheWholeRunLikeTorchPolynomialLr) {
  const auto schedule = make_schedule("polynomial", {0.4, 25, 250}, [](Params& p) { p.set("end_lr", 0.0); });
  EXPECT_TRUE(rates_match(rates_of(*schedule, 300),
                          torch_reference().rates("power 1 over 250"), 1e-12));
}

// MoXing's 32k-batch LARS recipe: polynomial_decay(29.0, step, 3600, 0.0001, power=2).
TEST(PolynomialSchedule, MatchesTfFormulaWithEndLr) {
  const auto schedule = make_schedule("polynomial", {29.0, 39, 3600}, [](Params& p) { p.set("power", 2.0); });
  std::vector<double> expected;
  for (std::int64_t step = 0; step < 4000; ++step)
    expected.push_back(tf_polynomial_decay(29.0, step, 3600, 0.0001, 2.0, false));
  EXPECT_TRUE(rates_match(rates_of(*schedule, 4000), expected, 1e-12));
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), 29.0);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(1800), (29.0 - 0.0001) * 0.25 + 0.0001);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(3600), 0.0001);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(100000), 0.0001);
}

TEST(PolynomialSchedule, CycleMatchesTfFormula) {
  const auto schedule = make_schedule("polynomial", {0.2, 10, 1000}, [](Params& p) {
    p.set("end_lr", 0.001);
    p.set("power", 1.5);
    p.set("decay_length", 10.0);  // epochs of 10 steps: 100 steps
    p.set("cycle", true);
  });
  std::vector<double> expected;
  for (std::int64_t step = 0; step < 450; ++step)
    expected.push_back(tf_polynomial_decay(0.2, step, 100, 0.001, 1.5, true));
  EXPECT_TRUE(rates_match(rates_of(*schedule, 450), expected, 1e-12));
  // The end of a cycle reaches end_lr; the next step starts a cycle twice as long.
  EXPECT_DOUBLE_EQ(schedule->learning_rate(100), 0.001);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(101), (0.2 - 0.001) * std::pow(1 - 101.0 / 200, 1.5) + 0.001);
}

TEST(PolynomialSchedule, LengthInEpochsCountsStepsPerEpoch) {
  const auto schedule = make_schedule("polynomial", {1.0, 50, 1000}, [](Params& p) {
    p.set("end_lr", 0.0);
    p.set("decay_length", 2.0);
  });
  EXPECT_DOUBLE_EQ(schedule->learning_rate(50), 0.5);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(100), 0.0);
}

// The core hands a decay that follows a warmup the steps left; a warmup as
// long as the run leaves none, and the decay is over before it starts.
TEST(PolynomialSchedule, NoStepsLeftGivesEndLr) {
  const auto schedule = make_schedule("polynomial", {0.1, 10, 0});
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), 0.0001);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(5), 0.0001);
}

}  // namespace

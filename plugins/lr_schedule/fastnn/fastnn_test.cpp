#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../testing/lr_schedule_testing.h"

namespace {

using orchestrate::Params;
using orchestrate::testing::make_schedule;
using orchestrate::testing::rates_match;
using orchestrate::testing::rates_of;
using orchestrate::testing::rule_problems;

// Every torch reference this file compares with: FastNN's default decay is
// StepLR, which computes each rate from the previous one (a product of a few
// factors here, so within 1e-15 of the closed form).
const orchestrate::testing::TorchReference& torch_reference() {
  static const orchestrate::testing::TorchReference reference({
      {"x0.94 every 100", "StepLR(optimizer, step_size=100, gamma=0.94)", 0.1, 1000},
  });
  return reference;
}

// The published formulas, written out as their sources compute them.

// tensorflow/nmt model.py _get_learning_rate_warmup, warmup_scheme "t2t".
double nmt_t2t_warmup(double learning_rate, std::int64_t global_step, std::int64_t warmup_steps) {
  if (!(global_step < warmup_steps)) return learning_rate;
  const double warmup_factor = std::exp(std::log(0.01) / static_cast<double>(warmup_steps));
  return std::pow(warmup_factor, static_cast<double>(warmup_steps - global_step)) * learning_rate;
}

// tensorflow/nmt model.py _get_decay_info + _get_learning_rate_decay: staircase
// exponential_decay(lr, step - start, decay_steps, 0.5) from start_decay_step.
double nmt_luong_decay(double learning_rate, std::int64_t global_step, std::int64_t num_train_steps,
                       const std::string& scheme) {
  std::int64_t start_decay_step = num_train_steps / 2;
  std::int64_t decay_times = scheme == "luong5" ? 5 : 10;
  if (scheme == "luong234") {
    start_decay_step = static_cast<std::int64_t>(static_cast<double>(num_train_steps) * 2 / 3);
    decay_times = 4;
  }
  const std::int64_t remain_steps = num_train_steps - start_decay_step;
  const auto decay_steps = static_cast<std::int64_t>(static_cast<double>(remain_steps) / decay_times);
  if (global_step < start_decay_step) return learning_rate;
  const double p = std::floor(static_cast<double>(global_step - start_decay_step) / static_cast<double>(decay_steps));
  return learning_rate * std::pow(0.5, p);
}

// TF-slim train_image_classifier.py _configure_learning_rate, "exponential":
// decay_steps = int(num_samples_per_epoch * num_epochs_per_decay / batch_size).
double slim_exponential(double learning_rate, std::int64_t global_step, std::int64_t num_samples_per_epoch,
                        std::int64_t batch_size, double num_epochs_per_decay, double decay_factor) {
  const auto decay_steps =
      static_cast<std::int64_t>(static_cast<double>(num_samples_per_epoch) * num_epochs_per_decay / batch_size);
  return learning_rate * std::pow(decay_factor, std::floor(static_cast<double>(global_step) / decay_steps));
}

// tf.train.polynomial_decay, power 1, no cycle.
double tf_linear_decay(double learning_rate, std::int64_t global_step, double decay_steps, double end_learning_rate) {
  const double step = std::min(static_cast<double>(global_step), decay_steps);
  return (learning_rate - end_learning_rate) * (1 - step / decay_steps) + end_learning_rate;
}

std::vector<double> expected_rates(std::int64_t steps, const std::function<double(std::int64_t)>& formula) {
  std::vector<double> rates;
  for (std::int64_t step = 0; step < steps; ++step) rates.push_back(formula(step));
  return rates;
}

TEST(FastNnSchedule, DefaultsDecayBy94PercentEveryTwoEpochsLikeTorchStepLr) {
  const auto schedule = make_schedule("fastnn", {0.1, 50, 1000});
  EXPECT_TRUE(rates_match(rates_of(*schedule, 1000), torch_reference().rates("x0.94 every 100"), 1e-12));
  EXPECT_DOUBLE_EQ(schedule->learning_rate(99), 0.1);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(100), 0.094);
}

// 1000 samples per epoch at batch 32: 31 steps per epoch as FastNN counts
// them (whole batches), 1.5 epochs per decay: int(1000 x 1.5 / 32) = 46 steps.
// 31 x 1.5 = 46.5 floors to the same 46.
TEST(FastNnSchedule, ExponentialMatchesTfSlim) {
  const auto schedule = make_schedule("fastnn", {0.2, 31, 620}, [](Params& p) {
    p.set("decay_epochs", 1.5);
    p.set("learning_rate_decay_factor", 0.8);
  });
  const auto expected = expected_rates(620, [](std::int64_t t) { return slim_exponential(0.2, t, 1000, 32, 1.5, 0.8); });
  EXPECT_TRUE(rates_match(rates_of(*schedule, 620), expected, 1e-12));
  EXPECT_DOUBLE_EQ(schedule->learning_rate(45), 0.2);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(46), 0.2 * 0.8);
}

TEST(FastNnSchedule, PolynomialDecaysLinearlyToEndLearningRateOverTheRun) {
  const auto schedule = make_schedule("fastnn", {0.1, 10, 400}, [](Params& p) {
    p.set("learning_rate_decay_type", std::string("polynomial"));
  });
  const auto expected = expected_rates(450, [](std::int64_t t) { return tf_linear_decay(0.1, t, 400, 0.0001); });
  EXPECT_TRUE(rates_match(rates_of(*schedule, 450), expected, 1e-12));
  EXPECT_DOUBLE_EQ(schedule->learning_rate(200), (0.1 + 0.0001) / 2);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(400), 0.0001);
}

TEST(FastNnSchedule, LuongSchemesMatchNmt) {
  for (const std::string scheme : {"luong234", "luong5", "luong10"}) {
    for (const std::int64_t total : {1000, 997, 61}) {
      const auto schedule = make_schedule("fastnn", {0.5, 7, total}, [&](Params& p) { p.set("decay_scheme", scheme); });
      const auto expected =
          expected_rates(total + 20, [&](std::int64_t t) { return nmt_luong_decay(0.5, t, total, scheme); });
      EXPECT_TRUE(rates_match(rates_of(*schedule, total + 20), expected, 1e-12)) << scheme << ", " << total << " steps";
    }
  }
  // luong234 over 1000 steps: decay starts at step 666 and halves every
  // int(334 / 4) = 83 steps from there (staircase: the first halving is a
  // whole period in), the fourth at step 998.
  const auto luong234 = make_schedule("fastnn", {0.5, 7, 1000}, [](Params& p) {
    p.set("decay_scheme", std::string("luong234"));
  });
  EXPECT_DOUBLE_EQ(luong234->learning_rate(748), 0.5);
  EXPECT_DOUBLE_EQ(luong234->learning_rate(749), 0.25);
  EXPECT_DOUBLE_EQ(luong234->learning_rate(832), 0.125);
  EXPECT_DOUBLE_EQ(luong234->learning_rate(997), 0.5 / 8);
  EXPECT_DOUBLE_EQ(luong234->learning_rate(998), 0.5 / 16);
}

TEST(FastNnSchedule, T2tWarmupRisesFromAHundredthMatchingNmt) {
  const auto schedule = make_schedule("fastnn", {0.1, 50, 1000}, [](Params& p) {
    p.set("warmup_steps", std::int64_t{100});
    p.set("learning_rate_decay_type", std::string("fixed"));
  });
  const auto expected = expected_rates(300, [](std::int64_t t) { return nmt_t2t_warmup(0.1, t, 100); });
  EXPECT_TRUE(rates_match(rates_of(*schedule, 300), expected, 1e-12));
  EXPECT_NEAR(schedule->learning_rate(0), 0.001, 1e-15);
  EXPECT_NEAR(schedule->learning_rate(50), 0.01, 1e-15);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(100), 0.1);
}

// FastNN decays the warmed-up lr: both apply while they overlap.
TEST(FastNnSchedule, WarmupAndDecayCompose) {
  const auto luong = make_schedule("fastnn", {0.3, 10, 100}, [](Params& p) {
    p.set("warmup_steps", std::int64_t{80});
    p.set("decay_scheme", std::string("luong10"));
  });
  const auto luong_expected = expected_rates(120, [](std::int64_t t) {
    return nmt_luong_decay(nmt_t2t_warmup(0.3, t, 80), t, 100, "luong10");
  });
  EXPECT_TRUE(rates_match(rates_of(*luong, 120), luong_expected, 1e-12));

  const auto exponential = make_schedule("fastnn", {0.3, 10, 100}, [](Params& p) {
    p.set("warmup_steps", std::int64_t{30});
  });
  const auto exponential_expected = expected_rates(120, [](std::int64_t t) {
    return slim_exponential(nmt_t2t_warmup(0.3, t, 30), t, 10, 1, 2.0, 0.94);
  });
  EXPECT_TRUE(rates_match(rates_of(*exponential, 120), exponential_expected, 1e-12));

  const auto polynomial = make_schedule("fastnn", {0.3, 10, 100}, [](Params& p) {
    p.set("warmup_steps", std::int64_t{30});
    p.set("learning_rate_decay_type", std::string("polynomial"));
  });
  const auto polynomial_expected = expected_rates(120, [](std::int64_t t) {
    return tf_linear_decay(nmt_t2t_warmup(0.3, t, 30), t, 100, 0.0001);
  });
  EXPECT_TRUE(rates_match(rates_of(*polynomial, 120), polynomial_expected, 1e-12));
}

// nmt divides by zero when a run has fewer steps left than halvings, and
// polynomial_decay when the run has no steps.
TEST(FastNnSchedule, TinyRunsStayFinite) {
  const std::vector<std::pair<std::string, std::string>> decays{
      {"decay_scheme", "luong234"}, {"decay_scheme", "luong5"}, {"decay_scheme", "luong10"},
      {"learning_rate_decay_type", "polynomial"}};
  for (const auto& key_and_value : decays) {
    const std::string& key = key_and_value.first;  // (clang 14 cannot capture a structured binding)
    const std::string& value = key_and_value.second;
    for (const std::int64_t total : {0, 1, 3, 9}) {
      const auto schedule = make_schedule("fastnn", {0.1, 1, total}, [&](Params& p) {
        p.set(key, value);
        p.set("warmup_steps", std::int64_t{2});
      });
      for (std::int64_t step = 0; step <= total + 2; ++step) {
        const double lr = schedule->learning_rate(step);
        EXPECT_TRUE(std::isfinite(lr) && lr > 0) << value << ", " << total << " steps, step " << step << ": " << lr;
      }
    }
  }
}

TEST(FastNnSchedule, DecaySchemeBesideAnotherDecayTypeIsRefused) {
  EXPECT_EQ(rule_problems("fastnn", [](Params& p) { p.set("decay_scheme", std::string("luong5")); }), "");
  EXPECT_EQ(rule_problems("fastnn", [](Params& p) { p.set("learning_rate_decay_type", std::string("fixed")); }), "");
  EXPECT_EQ(rule_problems("fastnn",
                          [](Params& p) {
                            p.set("decay_scheme", std::string("luong5"));
                            p.set("learning_rate_decay_type", std::string("polynomial"));
                          }),
            "decay_scheme = \"luong5\" replaces learning_rate_decay_type, so learning_rate_decay_type = "
            "\"polynomial\" would be ignored; remove one of the two");
}

}  // namespace

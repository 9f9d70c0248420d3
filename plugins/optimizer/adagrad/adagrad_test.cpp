#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/adagrad.h>

#include <cmath>
#include <vector>

#include "../common/device_skip_check.h"
#include "../common/parity_problem.h"
#include "../common/resume_check.h"
#include "../common/test_optimizers.h"
#include "orchestrate/testing/plugin_under_test.h"

namespace {

using namespace orchestrate::optimizer_testing;

at::Tensor weights(std::vector<double> values) { return at::tensor(values, at::kDouble).requires_grad_(); }
at::Tensor unit_curvature() { return at::ones({1}, at::kDouble); }
void lr_one_tenth(orchestrate::Params& p) { p.set("lr", 0.1); }

// sum1 = 0.1 + 1 = 1.1, w1 = 1 - 0.1 / sqrt(1.1); sum2 = 1.1 + w1^2, w2 = w1 - 0.1 * w1 / sqrt(sum2).
TEST(AdagradOptimizer, StepsMatchTheRuleWithTheInitialAccumulator) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adagrad", one_group(w), lr_one_tenth);
  const auto steps = quadratic_trajectory(*optimizer, w, unit_curvature(), 2);
  const double w1 = 1.0 - 0.1 / (std::sqrt(1.1) + 1e-10);
  EXPECT_NEAR(steps[0][0], w1, 1e-12);
  EXPECT_NEAR(steps[1][0], w1 - 0.1 * w1 / (std::sqrt(1.1 + w1 * w1) + 1e-10), 1e-12);
}

TEST(AdagradOptimizer, GroupWeightDecayAddsAnL2Term) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adagrad", one_group(w, /*weight_decay=*/0.5), lr_one_tenth);
  // g = 1 + 0.5 * 1; sum = 0.1 + 2.25.
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 1)[0][0], 1.0 - 0.1 * 1.5 / std::sqrt(2.35),
              1e-9);
}

TEST(AdagradOptimizer, StateKeepsTorchsSumAndIntStep) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adagrad", one_group(w), lr_one_tenth);
  quadratic_trajectory(*optimizer, w, unit_curvature(), 3);
  const auto& state =
      static_cast<const torch::optim::AdagradParamState&>(*optimizer->state().at(w.unsafeGetTensorImpl()));
  EXPECT_EQ(state.step(), 3);
  EXPECT_GT(state.sum().item<double>(), 1.1);
}

TEST(AdagradOptimizer, DefaultsReduceAQuadratic) {
  auto w = weights({1.0, -2.0});
  auto optimizer = create_optimizer("adagrad", one_group(w));
  const auto steps = quadratic_trajectory(*optimizer, w, at::tensor(std::vector<double>{1.0, 4.0}), 20);
  EXPECT_LT(steps.back()[0], 0.95);
  EXPECT_GT(steps.back()[1], -1.95);
}

TEST(AdagradOptimizer, OneTorchGroupPerContextGroup) { expect_groups_follow_context("adagrad"); }

TEST(AdagradOptimizer, HonoursLrSetOnParamGroups) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adagrad", one_group(w));
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  EXPECT_DOUBLE_EQ(quadratic_trajectory(*optimizer, w, unit_curvature(), 3).back()[0], 1.0);
}

TEST(AdagradOptimizer, SchemaHasFastNNsAccumulatorAndNoWeightDecay) {
  const auto& schema = orchestrate::testing::plugin_under_test().optimizers().get("adagrad").info.schema;
  EXPECT_EQ(schema.find("weight_decay"), nullptr);
  EXPECT_EQ(std::get<double>(*schema.find("initial_accumulator_value")->default_value), 0.1);
  EXPECT_EQ(schema.find("lr")->check(0.0), "must be > 0");
}

TEST(AdagradOptimizer, MatchesPyTorchOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adagrad");
  const auto params = params_for("adagrad", [](orchestrate::Params& p) { p.set("lr", 0.05); });
  expect_parity(train_in_cpp(entry.create, params),
                train_in_python(0.05, "torch.optim.Adagrad(groups, initial_accumulator_value=0.1, eps=1e-10)"));
}

TEST(AdagradOptimizer, ResumesExactlyFromSavedState) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adagrad");
  expect_resume_is_exact(entry.create, params_for("adagrad"));
}

TEST(AdagradOptimizer, ASkipOnTheDeviceLeavesNoTrace) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adagrad");
  expect_device_skip_leaves_no_trace(entry.create, params_for("adagrad"));
}

}  // namespace

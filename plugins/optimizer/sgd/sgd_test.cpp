#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

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
at::Tensor curvature(std::vector<double> values) { return at::tensor(values, at::kDouble); }
void lr_one_tenth(orchestrate::Params& p) { p.set("lr", 0.1); }

TEST(SgdOptimizer, StepsAreLrTimesGradient) {
  auto w = weights({1.0, -2.0});
  auto optimizer = create_optimizer("sgd", one_group(w), lr_one_tenth);
  const auto steps = quadratic_trajectory(*optimizer, w, curvature({1.0, 4.0}), 3);
  EXPECT_DOUBLE_EQ(steps[0][0], 0.9);   // 1 - 0.1 * 1
  EXPECT_DOUBLE_EQ(steps[0][1], -1.2);  // -2 - 0.1 * (4 * -2)
  EXPECT_NEAR(steps[2][0], 0.729, 1e-12);
  EXPECT_NEAR(steps[2][1], -0.432, 1e-12);
}

TEST(SgdOptimizer, DefaultsReduceAQuadratic) {
  auto w = weights({1.0, -2.0});
  auto optimizer = create_optimizer("sgd", one_group(w));
  const auto steps = quadratic_trajectory(*optimizer, w, curvature({1.0, 4.0}), 20);
  // Each step scales w_i by (1 - 0.01 * curvature_i).
  EXPECT_NEAR(steps.back()[0], std::pow(0.99, 20), 1e-12);
  EXPECT_NEAR(steps.back()[1], -2.0 * std::pow(0.96, 20), 1e-12);
}

TEST(SgdOptimizer, GroupWeightDecayAddsAnL2Term) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("sgd", one_group(w, /*weight_decay=*/0.5), lr_one_tenth);
  EXPECT_DOUBLE_EQ(quadratic_trajectory(*optimizer, w, curvature({1.0}), 1)[0][0], 0.85);  // 1 - 0.1 * (1 + 0.5)
  const auto& options = static_cast<const torch::optim::SGDOptions&>(optimizer->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.weight_decay(), 0.5);
}

TEST(SgdOptimizer, GroupLrScaleMultipliesTheLr) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("sgd", one_group(w, 0.0, /*lr_scale=*/2.0), lr_one_tenth);
  EXPECT_DOUBLE_EQ(quadratic_trajectory(*optimizer, w, curvature({1.0}), 1)[0][0], 0.8);
}

TEST(SgdOptimizer, OneTorchGroupPerContextGroup) { expect_groups_follow_context("sgd"); }

TEST(SgdOptimizer, HonoursLrSetOnParamGroups) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("sgd", one_group(w));
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  EXPECT_DOUBLE_EQ(quadratic_trajectory(*optimizer, w, curvature({1.0}), 3).back()[0], 1.0);
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.25);
  EXPECT_DOUBLE_EQ(quadratic_trajectory(*optimizer, w, curvature({1.0}), 1).back()[0], 0.75);
}

TEST(SgdOptimizer, SchemaHasOnlyLrAndRejectsZero) {
  const auto& schema = orchestrate::testing::plugin_under_test().optimizers().get("sgd").info.schema;
  EXPECT_EQ(schema.names(), std::vector<std::string>{"lr"});
  EXPECT_EQ(schema.find("lr")->check(0.0), "must be > 0");
  EXPECT_EQ(schema.find("lr")->check(1e-9), "");
}

TEST(SgdOptimizer, MatchesPyTorchOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("sgd");
  const auto params = params_for("sgd", [](orchestrate::Params& p) { p.set("lr", 0.2); });
  expect_parity(train_in_cpp(entry.create, params), train_in_python(0.2, "torch.optim.SGD(groups)"));
}

TEST(SgdOptimizer, ResumesExactlyFromSavedState) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("sgd");
  expect_resume_is_exact(entry.create, params_for("sgd"), /*stateful=*/false);
}

TEST(SgdOptimizer, ASkipOnTheDeviceLeavesNoTrace) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("sgd");
  expect_device_skip_leaves_no_trace(entry.create, params_for("sgd"));
}

}  // namespace

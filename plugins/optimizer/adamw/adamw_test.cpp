#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/adamw.h>

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

// Decoupled: w1 = w0 * (1 - lr * wd) - lr * g / |g| = 1 * (1 - 0.05) - 0.1.
// Adam's L2 term would give 0.9, the decay going through g / |g|.
TEST(AdamWOptimizer, GroupWeightDecayIsDecoupled) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adamw", one_group(w, /*weight_decay=*/0.5), lr_one_tenth);
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 1)[0][0], 0.85, 1e-8);
  const auto& options = static_cast<const torch::optim::AdamWOptions&>(optimizer->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.weight_decay(), 0.5);
}

// Bias-corrected like Adam: without decay the first step is lr * g / |g|.
TEST(AdamWOptimizer, FirstStepMovesEveryWeightByLr) {
  auto w = weights({1.0, -2.0});
  auto optimizer = create_optimizer("adamw", one_group(w), lr_one_tenth);
  const auto steps = quadratic_trajectory(*optimizer, w, at::tensor(std::vector<double>{1.0, 4.0}), 1);
  EXPECT_NEAR(steps[0][0], 0.9, 1e-8);
  EXPECT_NEAR(steps[0][1], -1.9, 1e-8);
}

TEST(AdamWOptimizer, NoWeightDecayWithoutTheHostsGroupDecay) {
  auto optimizer = create_optimizer("adamw", one_group(weights({1.0})));
  const auto& options = static_cast<const torch::optim::AdamWOptions&>(optimizer->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.weight_decay(), 0.0);  // not torch's AdamW default of 0.01
  EXPECT_DOUBLE_EQ(options.eps(), 1e-8);
  EXPECT_DOUBLE_EQ(options.lr(), 0.001);
}

TEST(AdamWOptimizer, OneTorchGroupPerContextGroup) { expect_groups_follow_context("adamw"); }

TEST(AdamWOptimizer, HonoursLrSetOnParamGroups) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adamw", one_group(w, 0.5));
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  EXPECT_DOUBLE_EQ(quadratic_trajectory(*optimizer, w, unit_curvature(), 3).back()[0], 1.0);
}

TEST(AdamWOptimizer, SchemaHasNoWeightDecay) {
  const auto& schema = orchestrate::testing::plugin_under_test().optimizers().get("adamw").info.schema;
  EXPECT_EQ(schema.find("weight_decay"), nullptr);
  EXPECT_EQ(schema.find("lr")->check(0.0), "must be > 0");
}

TEST(AdamWOptimizer, MatchesPyTorchOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adamw");
  const auto params = params_for("adamw", [](orchestrate::Params& p) { p.set("lr", 0.01); });
  expect_parity(train_in_cpp(entry.create, params), train_in_python(0.01, "torch.optim.AdamW(groups, eps=1e-8)"));
}

TEST(AdamWOptimizer, AmsgradMatchesPyTorchOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adamw");
  const auto params = params_for("adamw", [](orchestrate::Params& p) {
    p.set("lr", 0.02);
    p.set("beta2", 0.9);
    p.set("eps", 1e-3);
    p.set("amsgrad", true);
  });
  expect_parity(train_in_cpp(entry.create, params),
                train_in_python(0.02, "torch.optim.AdamW(groups, betas=(0.9, 0.9), eps=1e-3, amsgrad=True)"));
}

TEST(AdamWOptimizer, ResumesExactlyFromSavedState) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adamw");
  expect_resume_is_exact(entry.create, params_for("adamw", [](orchestrate::Params& p) { p.set("lr", 0.01); }));
}

TEST(AdamWOptimizer, ASkipOnTheDeviceLeavesNoTrace) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adamw");
  const auto params = params_for("adamw", [](orchestrate::Params& p) { p.set("lr", 0.01); });
  expect_device_skip_leaves_no_trace(entry.create, params);
}

}  // namespace

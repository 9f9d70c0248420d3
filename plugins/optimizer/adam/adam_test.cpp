#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/adam.h>

#include <tuple>
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

// lr 0.1 and PyTorch's eps, so the hand computations below are Adam's textbook steps.
void textbook(orchestrate::Params& p) {
  p.set("lr", 0.1);
  p.set("eps", 1e-8);
}

// With bias correction the first step is lr * g / |g|, whatever the gradient's size.
TEST(AdamOptimizer, FirstStepMovesEveryWeightByLr) {
  auto w = weights({1.0, -2.0});
  auto optimizer = create_optimizer("adam", one_group(w), textbook);
  const auto steps = quadratic_trajectory(*optimizer, w, at::tensor(std::vector<double>{1.0, 4.0}), 1);
  EXPECT_NEAR(steps[0][0], 0.9, 1e-8);
  EXPECT_NEAR(steps[0][1], -1.9, 1e-8);
}

// Second step by hand (g1 = 1, g2 = 0.9): m = 0.18 / (1 - 0.9^2) = 0.947368,
// v = 0.001809 / (1 - 0.999^2) = 0.904952, w2 = 0.9 - 0.1 * m / sqrt(v).
TEST(AdamOptimizer, SecondStepMatchesHandComputation) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adam", one_group(w), textbook);
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 2)[1][0], 0.8004122297, 1e-9);
}

// FastNN's eps of 1.0 damps the step: the first is lr * g / (|g| + 1) = 0.05 for g = 1.
TEST(AdamOptimizer, DefaultEpsOfOneDampsTheFirstStep) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adam", one_group(w), [](orchestrate::Params& p) { p.set("lr", 0.1); });
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 1)[0][0], 0.95, 1e-12);
}

TEST(AdamOptimizer, Beta1ControlsTheMomentum) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adam", one_group(w), [](orchestrate::Params& p) {
    textbook(p);
    p.set("beta1", 0.0);
  });
  // No running mean: m = g2 = 0.9, so w2 = 0.9 - 0.1 * 0.9 / sqrt(0.904952).
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 2)[1][0], 0.8053916182, 1e-9);
}

// L2, not decoupled: the decay term goes through the adaptive scaling, so
// with a single step it changes nothing but the gradient's size (g/|g| = 1).
TEST(AdamOptimizer, GroupWeightDecayIsAnL2GradientTerm) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adam", one_group(w, /*weight_decay=*/0.5), textbook);
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 1)[0][0], 0.9, 1e-8);
  const auto& options = static_cast<const torch::optim::AdamOptions&>(optimizer->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.weight_decay(), 0.5);
}

TEST(AdamOptimizer, PassesEveryParamToTorch) {
  auto optimizer = create_optimizer("adam", one_group(weights({1.0})), [](orchestrate::Params& p) {
    p.set("lr", 0.02);
    p.set("beta1", 0.8);
    p.set("beta2", 0.99);
    p.set("eps", 1e-6);
    p.set("amsgrad", true);
  });
  const auto& options = static_cast<const torch::optim::AdamOptions&>(optimizer->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.lr(), 0.02);
  EXPECT_DOUBLE_EQ(std::get<0>(options.betas()), 0.8);
  EXPECT_DOUBLE_EQ(std::get<1>(options.betas()), 0.99);
  EXPECT_DOUBLE_EQ(options.eps(), 1e-6);
  EXPECT_TRUE(options.amsgrad());
}

// The fused kernel reads a float step per parameter; the saved state keeps torch's int step.
TEST(AdamOptimizer, KeepsTorchsIntStepInItsState) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adam", one_group(w));
  quadratic_trajectory(*optimizer, w, unit_curvature(), 3);
  const auto& state =
      static_cast<const torch::optim::AdamParamState&>(*optimizer->state().at(w.unsafeGetTensorImpl()));
  EXPECT_EQ(state.step(), 3);
}

TEST(AdamOptimizer, DefaultsReduceAQuadratic) {
  auto w = weights({1.0, -2.0});
  auto optimizer = create_optimizer("adam", one_group(w));
  const auto steps = quadratic_trajectory(*optimizer, w, at::tensor(std::vector<double>{1.0, 4.0}), 20);
  EXPECT_LT(steps.back()[0], 0.95);
  EXPECT_GT(steps.back()[1], -1.95);
}

TEST(AdamOptimizer, OneTorchGroupPerContextGroup) { expect_groups_follow_context("adam"); }

TEST(AdamOptimizer, HonoursLrSetOnParamGroups) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adam", one_group(w));
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  EXPECT_DOUBLE_EQ(quadratic_trajectory(*optimizer, w, unit_curvature(), 3).back()[0], 1.0);
}

// Checked by the host against the schema, so the error carries the recipe's file:line.
TEST(AdamOptimizer, SchemaRejectsZeroLrAndBetaOfOne) {
  const auto& schema = orchestrate::testing::plugin_under_test().optimizers().get("adam").info.schema;
  EXPECT_EQ(schema.find("lr")->check(0.0), "must be > 0");
  EXPECT_EQ(schema.find("beta2")->check(1.0), "must be < 1");
  EXPECT_EQ(schema.find("beta2")->check(0.999), "");
  EXPECT_EQ(schema.find("beta1")->range_text(), "[0, 1)");
  EXPECT_EQ(schema.find("weight_decay"), nullptr);
}

TEST(AdamOptimizer, FastNNDefaultsMatchPyTorchOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adam");
  expect_parity(train_in_cpp(entry.create, params_for("adam")),
                train_in_python(0.01, "torch.optim.Adam(groups, betas=(0.9, 0.999), eps=1.0)"));
}

TEST(AdamOptimizer, AmsgradMatchesPyTorchOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adam");
  const auto params = params_for("adam", [](orchestrate::Params& p) {
    p.set("lr", 0.02);
    p.set("beta1", 0.8);
    p.set("beta2", 0.99);
    p.set("eps", 1e-8);
    p.set("amsgrad", true);
  });
  expect_parity(train_in_cpp(entry.create, params),
                train_in_python(0.02, "torch.optim.Adam(groups, betas=(0.8, 0.99), eps=1e-8, amsgrad=True)"));
}

TEST(AdamOptimizer, ResumesExactlyFromSavedState) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adam");
  expect_resume_is_exact(entry.create, params_for("adam", [](orchestrate::Params& p) { p.set("amsgrad", true); }));
}

TEST(AdamOptimizer, ASkipOnTheDeviceLeavesNoTrace) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adam");
  const auto params = params_for("adam", [](orchestrate::Params& p) { p.set("amsgrad", true); });
  expect_device_skip_leaves_no_trace(entry.create, params);
}

}  // namespace

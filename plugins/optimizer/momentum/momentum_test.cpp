#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <vector>

#include "../common/device_skip_check.h"
#include "../common/parity_problem.h"
#include "../common/resume_check.h"
#include "../common/test_optimizers.h"
#include "orchestrate/error.h"
#include "orchestrate/testing/plugin_under_test.h"

namespace {

using namespace orchestrate::optimizer_testing;

at::Tensor weights(std::vector<double> values) { return at::tensor(values, at::kDouble).requires_grad_(); }
at::Tensor unit_curvature() { return at::ones({1}, at::kDouble); }

// f(w) = 0.5 * w^2 (gradient w), lr 0.1 unless `customize` says otherwise.
std::vector<double> trajectory(const Customize& customize, int steps, double weight_decay = 0.0) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("momentum", one_group(w, weight_decay), [&](orchestrate::Params& p) {
    p.set("lr", 0.1);
    if (customize) customize(p);
  });
  std::vector<double> out;
  for (const auto& values : quadratic_trajectory(*optimizer, w, unit_curvature(), steps)) out.push_back(values[0]);
  return out;
}

// By hand: v1 = g1 = 1, w1 = 1 - 0.1 * 1 = 0.9; v2 = 0.9 * 1 + 0.9 = 1.8,
// w2 = 0.9 - 0.1 * 1.8 = 0.72. Plain SGD would give 0.9, then 0.81.
TEST(MomentumOptimizer, HeavyBallMatchesHandComputedSteps) {
  const auto steps = trajectory({}, 2);
  EXPECT_NEAR(steps[0], 0.9, 1e-12);
  EXPECT_NEAR(steps[1], 0.72, 1e-12);
}

TEST(MomentumOptimizer, ZeroMomentumIsPlainSgd) {
  const auto steps = trajectory([](orchestrate::Params& p) { p.set("momentum", 0.0); }, 2);
  EXPECT_NEAR(steps[0], 0.9, 1e-12);
  EXPECT_NEAR(steps[1], 0.81, 1e-12);
}

// Nesterov steps along g + momentum * v: w1 = 1 - 0.1 * (1 + 0.9 * 1) = 0.81;
// v2 = 0.9 * 1 + 0.81 = 1.71, w2 = 0.81 - 0.1 * (0.81 + 0.9 * 1.71) = 0.5751.
TEST(MomentumOptimizer, NesterovMatchesHandComputedSteps) {
  const auto steps = trajectory([](orchestrate::Params& p) { p.set("nesterov", true); }, 2);
  EXPECT_NEAR(steps[0], 0.81, 1e-12);
  EXPECT_NEAR(steps[1], 0.5751, 1e-12);
}

TEST(MomentumOptimizer, GroupWeightDecayAddsAnL2Term) {
  const auto steps = trajectory({}, 2, /*weight_decay=*/0.5);
  EXPECT_NEAR(steps[0], 0.85, 1e-12);    // g = 1 + 0.5
  EXPECT_NEAR(steps[1], 0.5875, 1e-12);  // v = 0.9 * 1.5 + 0.85 * 1.5
}

TEST(MomentumOptimizer, DefaultsReduceAQuadraticFasterThanPlainSgd) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("momentum", one_group(w));
  // 20 steps of lr 0.01, momentum 0.9 (PyTorch gives the same); plain SGD
  // with that lr would only reach 0.99^20 = 0.818.
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 20).back()[0], 0.1178221776, 1e-9);
}

// A parameter without a gradient keeps no buffer; when it first gets one it
// starts its buffer then, while the others continue theirs.
TEST(MomentumOptimizer, ParameterJoiningLateStartsItsOwnBuffer) {
  auto a = weights({1.0});
  auto b = weights({1.0});
  orchestrate::ParameterGroup group{"decay", {{"a", a}, {"b", b}}, 1.0, 0.0, false};
  auto optimizer = create_optimizer("momentum", orchestrate::OptimizerContext{{group}},
                                    [](orchestrate::Params& p) { p.set("lr", 0.1); });
  optimizer->zero_grad();
  (0.5 * a * a).sum().backward();  // only a has a gradient
  optimizer->step();
  EXPECT_NEAR(a.item<double>(), 0.9, 1e-12);
  EXPECT_DOUBLE_EQ(b.item<double>(), 1.0);
  optimizer->zero_grad();
  (0.5 * a * a + 0.5 * b * b).sum().backward();
  optimizer->step();
  EXPECT_NEAR(a.item<double>(), 0.72, 1e-12);  // second step of its buffer
  EXPECT_NEAR(b.item<double>(), 0.9, 1e-12);   // first step of its own
}

TEST(MomentumOptimizer, OneTorchGroupPerContextGroup) { expect_groups_follow_context("momentum"); }

TEST(MomentumOptimizer, HonoursLrSetOnParamGroups) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("momentum", one_group(w));
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  EXPECT_DOUBLE_EQ(quadratic_trajectory(*optimizer, w, unit_curvature(), 3).back()[0], 1.0);
}

TEST(MomentumOptimizer, NesterovWithoutMomentumIsARuleTheHostChecks) {
  const auto nesterov_no_momentum = [](orchestrate::Params& p) {
    p.set("nesterov", true);
    p.set("momentum", 0.0);
  };
  EXPECT_NE(rule_problems("momentum", nesterov_no_momentum).find("nesterov = true needs momentum > 0"),
            std::string::npos);
  EXPECT_EQ(rule_problems("momentum", [](orchestrate::Params& p) { p.set("nesterov", true); }), "");
  EXPECT_THROW(create_optimizer("momentum", one_group(weights({1.0})), nesterov_no_momentum), orchestrate::RecipeError);
}

TEST(MomentumOptimizer, SchemaHasNoWeightDecay) {
  const auto& schema = orchestrate::testing::plugin_under_test().optimizers().get("momentum").info.schema;
  EXPECT_EQ(schema.find("weight_decay"), nullptr);
  EXPECT_EQ(schema.find("lr")->check(0.0), "must be > 0");
}

TEST(MomentumOptimizer, MatchesPyTorchOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("momentum");
  expect_parity(train_in_cpp(entry.create, params_for("momentum")),
                train_in_python(0.01, "torch.optim.SGD(groups, momentum=0.9)"));
}

TEST(MomentumOptimizer, NesterovMatchesPyTorchOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("momentum");
  const auto params = params_for("momentum", [](orchestrate::Params& p) {
    p.set("lr", 0.05);
    p.set("momentum", 0.8);
    p.set("nesterov", true);
  });
  expect_parity(train_in_cpp(entry.create, params),
                train_in_python(0.05, "torch.optim.SGD(groups, momentum=0.8, nesterov=True)"));
}

TEST(MomentumOptimizer, ResumesExactlyFromSavedState) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("momentum");
  expect_resume_is_exact(entry.create, params_for("momentum"));
}

TEST(MomentumOptimizer, ASkipOnTheDeviceLeavesNoTrace) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("momentum");
  const auto params = params_for("momentum", [](orchestrate::Params& p) { p.set("nesterov", true); });
  expect_device_skip_leaves_no_trace(entry.create, params);
}

}  // namespace

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/rmsprop.h>

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

// FastNN's defaults by hand (g1 = 1): ms = 0.1, buf = 1 / (sqrt(0.1) + 1),
// w1 = 1 - 0.1 * buf. Then g2 = w1: ms = 0.09 + 0.1 w1^2,
// buf = 0.9 buf + w1 / (sqrt(ms) + 1), w2 = w1 - 0.1 buf.
TEST(RmspropOptimizer, StepsMatchPyTorchsRuleByHand) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("rmsprop", one_group(w), lr_one_tenth);
  const auto steps = quadratic_trajectory(*optimizer, w, unit_curvature(), 2);
  const double buffer1 = 1.0 / (std::sqrt(0.1) + 1.0);
  const double w1 = 1.0 - 0.1 * buffer1;
  EXPECT_NEAR(steps[0][0], w1, 1e-12);
  const double buffer2 = 0.9 * buffer1 + w1 / (std::sqrt(0.09 + 0.1 * w1 * w1) + 1.0);
  EXPECT_NEAR(steps[1][0], w1 - 0.1 * buffer2, 1e-12);
}

// Centered, no momentum (g1 = 1): ms = 0.1, mean g = 0.1, variance 0.1 - 0.01.
TEST(RmspropOptimizer, CenteredDividesByTheVariance) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("rmsprop", one_group(w), [](orchestrate::Params& p) {
    lr_one_tenth(p);
    p.set("centered", true);
    p.set("momentum", 0.0);
  });
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 1)[0][0], 1.0 - 0.1 / (std::sqrt(0.09) + 1.0),
              1e-12);
}

TEST(RmspropOptimizer, GroupWeightDecayAddsAnL2Term) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("rmsprop", one_group(w, /*weight_decay=*/0.5), lr_one_tenth);
  // g = 1.5: ms = 0.1 * 2.25.
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 1)[0][0],
              1.0 - 0.1 * 1.5 / (std::sqrt(0.225) + 1.0), 1e-12);
}

TEST(RmspropOptimizer, DecayIsTorchsAlpha) {
  auto optimizer = create_optimizer("rmsprop", one_group(weights({1.0})), [](orchestrate::Params& p) {
    p.set("decay", 0.95);
  });
  const auto& options = static_cast<const torch::optim::RMSpropOptions&>(optimizer->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.alpha(), 0.95);
  EXPECT_DOUBLE_EQ(options.momentum(), 0.9);
  EXPECT_DOUBLE_EQ(options.eps(), 1.0);
}

TEST(RmspropOptimizer, DefaultsReduceAQuadratic) {
  auto w = weights({1.0, -2.0});
  auto optimizer = create_optimizer("rmsprop", one_group(w));
  const auto steps = quadratic_trajectory(*optimizer, w, at::tensor(std::vector<double>{1.0, 4.0}), 20);
  EXPECT_LT(std::abs(steps.back()[0]), 0.95);
  EXPECT_LT(std::abs(steps.back()[1]), 1.95);
}

TEST(RmspropOptimizer, OneTorchGroupPerContextGroup) { expect_groups_follow_context("rmsprop"); }

TEST(RmspropOptimizer, HonoursLrSetOnParamGroups) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("rmsprop", one_group(w));
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  EXPECT_DOUBLE_EQ(quadratic_trajectory(*optimizer, w, unit_curvature(), 3).back()[0], 1.0);
}

TEST(RmspropOptimizer, SchemaHasNoWeightDecay) {
  const auto& schema = orchestrate::testing::plugin_under_test().optimizers().get("rmsprop").info.schema;
  EXPECT_EQ(schema.find("weight_decay"), nullptr);
  EXPECT_EQ(schema.find("decay")->check(1.0), "must be < 1");
}

TEST(RmspropOptimizer, FastNNDefaultsMatchPyTorchOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("rmsprop");
  expect_parity(train_in_cpp(entry.create, params_for("rmsprop")),
                train_in_python(0.01, "torch.optim.RMSprop(groups, alpha=0.9, eps=1.0, momentum=0.9)"));
}

TEST(RmspropOptimizer, CenteredMatchesPyTorchOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("rmsprop");
  const auto params = params_for("rmsprop", [](orchestrate::Params& p) {
    p.set("decay", 0.99);
    p.set("momentum", 0.0);
    p.set("eps", 1e-3);
    p.set("centered", true);
  });
  expect_parity(train_in_cpp(entry.create, params),
                train_in_python(0.01, "torch.optim.RMSprop(groups, alpha=0.99, eps=1e-3, centered=True)"));
}

TEST(RmspropOptimizer, ResumesExactlyFromSavedState) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("rmsprop");
  expect_resume_is_exact(entry.create, params_for("rmsprop", [](orchestrate::Params& p) { p.set("centered", true); }));
}

// Centered with momentum: every state list the step writes.
TEST(RmspropOptimizer, ASkipOnTheDeviceLeavesNoTrace) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("rmsprop");
  expect_device_skip_leaves_no_trace(entry.create, params_for("rmsprop", [](orchestrate::Params& p) {
                                       p.set("centered", true);
                                       p.set("momentum", 0.9);
                                     }));
}

}  // namespace

// adamweightdecay, registered by the adamw plugin: BERT's AdamWeightDecayOptimizer.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/adamw.h>

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

// No bias correction: m1 = 0.1 g, v1 = 0.001 g^2, so the first step is
// lr * (0.1 / (sqrt(0.001) + eps) + wd * w), about 3.16 lr for g = 1, where
// AdamW's would be lr.
TEST(AdamWeightDecayOptimizer, FirstStepHasNoBiasCorrection) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adamweightdecay", one_group(w, /*weight_decay=*/0.5));
  const double expected = 1.0 - 0.01 * (0.1 / (std::sqrt(0.001) + 1e-6) + 0.5 * 1.0);
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 1)[0][0], expected, 1e-12);
}

// Second step by hand (g2 = w1): m2 = 0.09 + 0.1 w1, v2 = 0.000999 + 0.001 w1^2.
TEST(AdamWeightDecayOptimizer, SecondStepMatchesTheRule) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adamweightdecay", one_group(w), [](orchestrate::Params& p) { p.set("lr", 0.1); });
  const auto steps = quadratic_trajectory(*optimizer, w, unit_curvature(), 2);
  const double w1 = steps[0][0];
  const double m2 = 0.9 * 0.1 + 0.1 * w1;
  const double v2 = 0.999 * 0.001 + 0.001 * w1 * w1;
  EXPECT_NEAR(steps[1][0], w1 - 0.1 * m2 / (std::sqrt(v2) + 1e-6), 1e-12);
}

TEST(AdamWeightDecayOptimizer, BertDefaults) {
  auto optimizer = create_optimizer("adamweightdecay", one_group(weights({1.0})));
  const auto& options = static_cast<const torch::optim::AdamWOptions&>(optimizer->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.eps(), 1e-6);
  EXPECT_DOUBLE_EQ(std::get<0>(options.betas()), 0.9);
  EXPECT_DOUBLE_EQ(std::get<1>(options.betas()), 0.999);
  EXPECT_DOUBLE_EQ(options.weight_decay(), 0.0);
}

TEST(AdamWeightDecayOptimizer, OneTorchGroupPerContextGroup) { expect_groups_follow_context("adamweightdecay"); }

TEST(AdamWeightDecayOptimizer, HonoursLrSetOnParamGroups) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adamweightdecay", one_group(w, 0.5));
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  EXPECT_DOUBLE_EQ(quadratic_trajectory(*optimizer, w, unit_curvature(), 3).back()[0], 1.0);
}

// PyTorch has no such optimizer: the reference is BERT's update rule
// (google-research/bert, optimization.py, AdamWeightDecayOptimizer.
// apply_gradients) transcribed op for op into numpy float32, as TF computes it.
const char* kBertReference = R"(
import numpy as np
f32 = np.float32
class BertAdamWeightDecay:
    def __init__(self, param_groups, beta_1=0.9, beta_2=0.999, epsilon=1e-6):
        self.param_groups = param_groups
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.m, self.v = {}, {}
    def zero_grad(self):
        for group in self.param_groups:
            for p in group['params']:
                p.grad = None
    def step(self):
        for group in self.param_groups:
            learning_rate, weight_decay_rate = f32(group['lr']), f32(group['weight_decay'])
            for p in group['params']:
                grad, param = p.grad.numpy(), p.detach().numpy()
                m = self.m.get(id(p), np.zeros_like(param))
                v = self.v.get(id(p), np.zeros_like(param))
                # TF turns each Python constant (1.0 - beta_1 included) into a float32 tensor.
                next_m = f32(self.beta_1) * m + f32(1.0 - self.beta_1) * grad
                next_v = f32(self.beta_2) * v + f32(1.0 - self.beta_2) * np.square(grad)
                update = next_m / (np.sqrt(next_v) + f32(self.epsilon))
                if weight_decay_rate > 0:
                    update += weight_decay_rate * param
                next_param = param - learning_rate * update
                with torch.no_grad():
                    p.copy_(torch.from_numpy(next_param))
                self.m[id(p)], self.v[id(p)] = next_m, next_v
)";

TEST(AdamWeightDecayOptimizer, MatchesBertsRuleOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adamweightdecay");
  expect_parity(train_in_cpp(entry.create, params_for("adamweightdecay")),
                train_in_python(0.01, "BertAdamWeightDecay(groups)", kBertReference));
}

TEST(AdamWeightDecayOptimizer, ResumesExactlyFromSavedState) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adamweightdecay");
  expect_resume_is_exact(entry.create, params_for("adamweightdecay"));
}

TEST(AdamWeightDecayOptimizer, ASkipOnTheDeviceLeavesNoTrace) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adamweightdecay");
  expect_device_skip_leaves_no_trace(entry.create, params_for("adamweightdecay"));
}

}  // namespace

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../common/device_skip_check.h"
#include "../common/parity_problem.h"
#include "../common/resume_check.h"
#include "../common/test_optimizers.h"
#include "foreach_ftrl.h"
#include "orchestrate/testing/plugin_under_test.h"

namespace {

using namespace orchestrate::optimizer_testing;
using orchestrate::optimizers::FtrlOptions;
using orchestrate::optimizers::FtrlParamState;

at::Tensor weights(std::vector<double> values) { return at::tensor(values, at::kDouble).requires_grad_(); }
at::Tensor unit_curvature() { return at::ones({1}, at::kDouble); }
void lr_one_tenth(orchestrate::Params& p) { p.set("lr", 0.1); }

// TF's rule by hand, w0 = 1, g = 1, accum0 = 0.1: accum1 = 1.1,
// linear = 1 - (sqrt(1.1) - sqrt(0.1)) / 0.1 * 1, w1 = -linear / (sqrt(1.1) / 0.1).
TEST(FtrlOptimizer, FirstStepMatchesTensorFlowsRuleByHand) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("ftrl", one_group(w), lr_one_tenth);
  const double linear = 1.0 - (std::sqrt(1.1) - std::sqrt(0.1)) / 0.1;
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 1)[0][0], -linear / (std::sqrt(1.1) / 0.1), 1e-12);
}

// With l1 and l2: var = (sign(linear) * l1 - linear) / (sqrt(accum) / lr + 2 * l2).
TEST(FtrlOptimizer, L1AndL2EnterAsInTensorFlow) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("ftrl", one_group(w), [](orchestrate::Params& p) {
    lr_one_tenth(p);
    p.set("l1", 0.5);
    p.set("l2", 0.25);
  });
  const double linear = 1.0 - (std::sqrt(1.1) - std::sqrt(0.1)) / 0.1;  // about -6.3, beyond l1
  const double expected = (-0.5 - linear) / (std::sqrt(1.1) / 0.1 + 0.5);
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 1)[0][0], expected, 1e-12);
}

TEST(FtrlOptimizer, L1ZeroesCoordinatesWithSmallLinearTerms) {
  auto w = weights({1.0, 1.0});
  auto optimizer = create_optimizer("ftrl", one_group(w), [](orchestrate::Params& p) {
    lr_one_tenth(p);
    p.set("l1", 1.0);
  });
  const auto step = quadratic_trajectory(*optimizer, w, at::tensor(std::vector<double>{1.0, 0.01}), 1)[0];
  const double linear = 1.0 - (std::sqrt(1.1) - std::sqrt(0.1)) / 0.1;  // about -6.3
  EXPECT_NEAR(step[0], (-1.0 - linear) / (std::sqrt(1.1) / 0.1), 1e-12);
  EXPECT_EQ(step[1], 0.0);  // g = 0.01: |linear| is about 0.008, below l1
}

TEST(FtrlOptimizer, OtherLearningRatePowersUsePow) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("ftrl", one_group(w), [](orchestrate::Params& p) {
    lr_one_tenth(p);
    p.set("learning_rate_power", -0.25);
  });
  const double linear = 1.0 - (std::pow(1.1, 0.25) - std::pow(0.1, 0.25)) / 0.1;
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 1)[0][0], -linear / (std::pow(1.1, 0.25) / 0.1),
              1e-12);
}

// The host's weight decay is an L2 gradient term: g = 1 + 0.5 * 1 in TF's rule.
TEST(FtrlOptimizer, GroupWeightDecayAddsAnL2GradientTerm) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("ftrl", one_group(w, /*weight_decay=*/0.5), lr_one_tenth);
  const double accum = 0.1 + 1.5 * 1.5;
  const double linear = 1.5 - (std::sqrt(accum) - std::sqrt(0.1)) / 0.1;
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 1)[0][0], -linear / (std::sqrt(accum) / 0.1),
              1e-12);
  const auto& options = static_cast<const FtrlOptions&>(optimizer->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.weight_decay(), 0.5);
}

TEST(FtrlOptimizer, StateHoldsAccumulatorAndLinearTerm) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("ftrl", one_group(w), lr_one_tenth);
  quadratic_trajectory(*optimizer, w, unit_curvature(), 1);
  const auto& state = static_cast<const FtrlParamState&>(*optimizer->state().at(w.unsafeGetTensorImpl()));
  EXPECT_EQ(state.step(), 1);
  EXPECT_NEAR(state.accum().item<double>(), 1.1, 1e-12);
  EXPECT_NEAR(state.linear().item<double>(), 1.0 - (std::sqrt(1.1) - std::sqrt(0.1)) / 0.1, 1e-12);
}

TEST(FtrlOptimizer, DefaultsReduceAQuadratic) {
  auto w = weights({1.0, -2.0});
  auto optimizer = create_optimizer("ftrl", one_group(w));
  const auto curvature = at::tensor(std::vector<double>{1.0, 4.0});
  const auto loss = [&] { return (0.5 * curvature * w * w).sum().item<double>(); };
  const double before = loss();
  quadratic_trajectory(*optimizer, w, curvature, 20);
  EXPECT_LT(loss(), before);
}

TEST(FtrlOptimizer, OneTorchGroupPerContextGroup) { expect_groups_follow_context("ftrl"); }

// TF divides by lr; a group at lr 0 is skipped, so it neither moves nor divides by zero.
TEST(FtrlOptimizer, LrZeroLeavesWeightsAndStateAlone) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("ftrl", one_group(w));
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  EXPECT_DOUBLE_EQ(quadratic_trajectory(*optimizer, w, unit_curvature(), 3).back()[0], 1.0);
  EXPECT_TRUE(optimizer->state().empty());
}

TEST(FtrlOptimizer, SchemaHasFastNNsParametersAndNoWeightDecay) {
  const auto& schema = orchestrate::testing::plugin_under_test().optimizers().get("ftrl").info.schema;
  EXPECT_EQ(schema.names(), (std::vector<std::string>{"lr", "learning_rate_power", "initial_accumulator_value", "l1",
                                                      "l2"}));
  EXPECT_EQ(schema.find("learning_rate_power")->check(0.5), "must be <= 0");
}

// PyTorch has no FTRL: the reference is TensorFlow's ApplyFtrl CPU functor
// (tensorflow/core/kernels/training_ops.cc, functor::ApplyFtrl<CPUDevice, T>)
// transcribed into numpy float32, the host's weight decay added to the
// gradient first. Nothing in it is shared with the C++ implementation.
const char* kTensorFlowFtrl = R"(
import numpy as np
class TensorFlowFtrl:
    def __init__(self, param_groups, lr_power, initial_accumulator_value, l1, l2):
        self.param_groups = param_groups
        self.lr_power, self.l1, self.l2 = np.float32(lr_power), np.float32(l1), np.float32(l2)
        self.initial = np.float32(initial_accumulator_value)
        self.accum, self.linear = {}, {}
    def zero_grad(self):
        for group in self.param_groups:
            for p in group['params']:
                p.grad = None
    def step(self):
        for group in self.param_groups:
            lr = np.float32(group['lr'])
            for p in group['params']:
                var = p.detach().numpy().copy()
                grad = p.grad.numpy() + np.float32(group['weight_decay']) * var
                accum = self.accum.get(id(p), np.full_like(var, self.initial))
                linear = self.linear.get(id(p), np.zeros_like(var))
                new_accum = accum + np.square(grad)
                if self.lr_power == np.float32(-0.5):
                    linear = linear + (grad - (np.sqrt(new_accum) - np.sqrt(accum)) / lr * var)
                    y = np.sqrt(new_accum) / lr + np.float32(2) * self.l2
                else:
                    linear = linear + (grad - (np.power(new_accum, -self.lr_power) - np.power(accum, -self.lr_power)) / lr * var)
                    y = np.power(new_accum, -self.lr_power) / lr + np.float32(2) * self.l2
                x = self.l1 * np.sign(linear) - linear
                var = np.where(np.abs(linear) > self.l1, x / y, np.float32(0)).astype(np.float32)
                with torch.no_grad():
                    p.copy_(torch.from_numpy(var))
                self.accum[id(p)], self.linear[id(p)] = new_accum, linear
)";

TEST(FtrlOptimizer, FastNNDefaultsMatchTensorFlowsRuleOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("ftrl");
  const auto params = params_for("ftrl", lr_one_tenth);
  expect_parity(train_in_cpp(entry.create, params),
                train_in_python(0.1, "TensorFlowFtrl(groups, -0.5, 0.1, 0.0, 0.0)", kTensorFlowFtrl));
}

TEST(FtrlOptimizer, L1L2AndAnotherPowerMatchTensorFlowsRuleOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("ftrl");
  const auto params = params_for("ftrl", [](orchestrate::Params& p) {
    p.set("lr", 0.2);
    p.set("learning_rate_power", -0.6);
    p.set("initial_accumulator_value", 0.05);
    p.set("l1", 0.002);
    p.set("l2", 0.01);
  });
  expect_parity(train_in_cpp(entry.create, params),
                train_in_python(0.2, "TensorFlowFtrl(groups, -0.6, 0.05, 0.002, 0.01)", kTensorFlowFtrl));
}

TEST(FtrlOptimizer, ResumesExactlyFromSavedState) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("ftrl");
  expect_resume_is_exact(entry.create, params_for("ftrl", [](orchestrate::Params& p) { p.set("l1", 0.001); }));
}

// Its accum is replaced, not written in place: the undo puts the old values into the new tensors.
TEST(FtrlOptimizer, ASkipOnTheDeviceLeavesNoTrace) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("ftrl");
  expect_device_skip_leaves_no_trace(entry.create,
                                     params_for("ftrl", [](orchestrate::Params& p) { p.set("l1", 0.001); }));
}

}  // namespace

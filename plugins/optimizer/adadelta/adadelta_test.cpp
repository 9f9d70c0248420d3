#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../common/device_skip_check.h"
#include "../common/parity_problem.h"
#include "../common/resume_check.h"
#include "../common/test_optimizers.h"
#include "foreach_adadelta.h"
#include "orchestrate/testing/plugin_under_test.h"

namespace {

using namespace orchestrate::optimizer_testing;
using orchestrate::optimizers::AdadeltaOptions;
using orchestrate::optimizers::AdadeltaParamState;

at::Tensor weights(std::vector<double> values) { return at::tensor(values, at::kDouble).requires_grad_(); }
at::Tensor unit_curvature() { return at::ones({1}, at::kDouble); }
void lr_one_tenth(orchestrate::Params& p) { p.set("lr", 0.1); }

// FastNN's rho 0.95 and eps 1.0 by hand (g1 = 1): ms = 0.05,
// delta1 = sqrt(0 + 1) / sqrt(0.05 + 1), md = 0.05 delta1^2. Then g2 = w1:
// ms = 0.0475 + 0.05 w1^2, delta2 = sqrt(md + 1) / sqrt(ms + 1) * w1.
TEST(AdadeltaOptimizer, StepsMatchZeilersRuleByHand) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adadelta", one_group(w), lr_one_tenth);
  const auto steps = quadratic_trajectory(*optimizer, w, unit_curvature(), 2);
  const double delta1 = 1.0 / std::sqrt(1.05);
  const double w1 = 1.0 - 0.1 * delta1;
  EXPECT_NEAR(steps[0][0], w1, 1e-12);
  const double delta2 = std::sqrt(0.05 * delta1 * delta1 + 1.0) / std::sqrt(0.0475 + 0.05 * w1 * w1 + 1.0) * w1;
  EXPECT_NEAR(steps[1][0], w1 - 0.1 * delta2, 1e-12);
}

TEST(AdadeltaOptimizer, GroupWeightDecayAddsAnL2Term) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adadelta", one_group(w, /*weight_decay=*/0.5), lr_one_tenth);
  // g = 1.5: ms = 0.05 * 2.25.
  EXPECT_NEAR(quadratic_trajectory(*optimizer, w, unit_curvature(), 1)[0][0], 1.0 - 0.1 * 1.5 / std::sqrt(1.1125),
              1e-12);
  const auto& options = static_cast<const AdadeltaOptions&>(optimizer->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.weight_decay(), 0.5);
}

TEST(AdadeltaOptimizer, FastNNDefaultsReachTheOptions) {
  auto optimizer = create_optimizer("adadelta", one_group(weights({1.0})));
  const auto& options = static_cast<const AdadeltaOptions&>(optimizer->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.lr(), 0.01);
  EXPECT_DOUBLE_EQ(options.rho(), 0.95);
  EXPECT_DOUBLE_EQ(options.eps(), 1.0);
}

TEST(AdadeltaOptimizer, DefaultsReduceAQuadratic) {
  auto w = weights({1.0, -2.0});
  auto optimizer = create_optimizer("adadelta", one_group(w));
  const auto curvature = at::tensor(std::vector<double>{1.0, 4.0});
  const auto loss = [&] { return (0.5 * curvature * w * w).sum().item<double>(); };
  const double before = loss();
  quadratic_trajectory(*optimizer, w, curvature, 20);
  EXPECT_LT(loss(), before);
}

TEST(AdadeltaOptimizer, StateHasRunningMeansAndStep) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adadelta", one_group(w));
  quadratic_trajectory(*optimizer, w, unit_curvature(), 3);
  const auto& state = static_cast<const AdadeltaParamState&>(*optimizer->state().at(w.unsafeGetTensorImpl()));
  EXPECT_EQ(state.step(), 3);
  EXPECT_GT(state.square_avg().item<double>(), 0.0);
  EXPECT_GT(state.acc_delta().item<double>(), 0.0);
}

TEST(AdadeltaOptimizer, OneTorchGroupPerContextGroup) { expect_groups_follow_context("adadelta"); }

TEST(AdadeltaOptimizer, HonoursLrSetOnParamGroups) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adadelta", one_group(w));
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  EXPECT_DOUBLE_EQ(quadratic_trajectory(*optimizer, w, unit_curvature(), 3).back()[0], 1.0);
}

TEST(AdadeltaOptimizer, SchemaHasNoWeightDecay) {
  const auto& schema = orchestrate::testing::plugin_under_test().optimizers().get("adadelta").info.schema;
  EXPECT_EQ(schema.find("weight_decay"), nullptr);
  EXPECT_EQ(schema.find("eps")->check(0.0), "must be > 0");
}

TEST(AdadeltaOptimizer, FastNNRhoAndEpsMatchPyTorchOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adadelta");
  const auto params = params_for("adadelta", [](orchestrate::Params& p) { p.set("lr", 0.3); });
  expect_parity(train_in_cpp(entry.create, params),
                train_in_python(0.3, "torch.optim.Adadelta(groups, rho=0.95, eps=1.0)"));
}

TEST(AdadeltaOptimizer, ZeilersEpsilonMatchesPyTorchOverTwentyScheduledSteps) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adadelta");
  const auto params = params_for("adadelta", [](orchestrate::Params& p) {
    p.set("lr", 1.0);
    p.set("rho", 0.9);
    p.set("eps", 1e-6);
  });
  expect_parity(train_in_cpp(entry.create, params),
                train_in_python(1.0, "torch.optim.Adadelta(groups, rho=0.9, eps=1e-6)"));
}

TEST(AdadeltaOptimizer, ResumesExactlyFromSavedState) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adadelta");
  expect_resume_is_exact(entry.create, params_for("adadelta", [](orchestrate::Params& p) { p.set("lr", 0.3); }));
}

TEST(AdadeltaOptimizer, ASkipOnTheDeviceLeavesNoTrace) {
  const auto& entry = orchestrate::testing::plugin_under_test().optimizers().get("adadelta");
  expect_device_skip_leaves_no_trace(entry.create,
                                     params_for("adadelta", [](orchestrate::Params& p) { p.set("lr", 0.3); }));
}

// Steps that hand no flag between those that do (undone on the CPU here, as
// on a GPU): the saved count still leaves out only the one step skipped.
TEST(AdadeltaOptimizer, AnUndoneStepStaysUncountedThroughStepsWithoutAFlag) {
  auto w = weights({1.0});
  auto optimizer = create_optimizer("adadelta", one_group(w));
  auto& undoing = dynamic_cast<orchestrate::optimizers::UndoesSkippedSteps&>(*optimizer);
  undoing.undo_on_the_cpu_too();
  undoing.skip_next_step_if(at::ones({}));
  quadratic_trajectory(*optimizer, w, unit_curvature(), 1);  // skipped
  quadratic_trajectory(*optimizer, w, unit_curvature(), 2);  // no flag
  undoing.skip_next_step_if(at::zeros({}));
  quadratic_trajectory(*optimizer, w, unit_curvature(), 1);
  torch::serialize::OutputArchive archive;
  optimizer->save(archive);
  const auto& state = static_cast<const AdadeltaParamState&>(*optimizer->state().at(w.unsafeGetTensorImpl()));
  EXPECT_EQ(state.step(), 3);
}

}  // namespace

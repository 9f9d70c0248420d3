// The optimizer contract.
// Part of share/doc/design.md's promise that each kind has a conformance test
// every plugin of that kind passes; run on the components conformance_plugins.h
// selected (`orchestrate conformance`).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/optimizer.h>

#include <limits>
#include <memory>
#include <vector>

#include "orchestrate/optimizer.h"

#include "conformance/conformance_plugins.h"
#include "conformance/optimizer_groups.h"

namespace {

using orchestrate::ComponentKind;
using namespace orchestrate::conformance;  // registry(), selected_names(), params_for(), ...

class OptimizerConformance : public testing::TestWithParam<std::string> {
 protected:
  // f(w, b) = 0.5 * sum(curvature * w^2) + 0.5 * b^2, minimum 0 at 0.
  at::Tensor loss() const {
    return (0.5 * at::tensor(std::vector<float>{1.0f, 4.0f, 0.5f}) * weights_ * weights_).sum() +
           0.5 * (bias_ * bias_).sum();
  }
  void take_steps(torch::optim::Optimizer& optimizer, int steps) const {
    for (int step = 0; step < steps; ++step) {
      optimizer.zero_grad();
      loss().backward();
      optimizer.step();
    }
  }
  std::unique_ptr<torch::optim::Optimizer> make() const {
    const auto& entry = registry().optimizers().get(GetParam());
    return entry.create(params_for(ComponentKind::optimizer, GetParam()), two_groups(weights_, bias_));
  }
  at::Tensor weights_ = at::tensor(std::vector<float>{1.0f, -2.0f, 3.0f}).requires_grad_();
  at::Tensor bias_ = at::tensor(std::vector<float>{0.5f}).requires_grad_();
};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OptimizerConformance);

// An optimizer that skips on the device (SkipsOnDevice) leaves no trace of
// a skipped step: with one skipped after the first step and every other
// step handed a flag of 0, four steps end where four plain ones do.
TEST_P(OptimizerConformance, OneThatSkipsOnTheDeviceLeavesASkippedStepNoTrace) {
  const auto plain_weights = weights_.detach().clone(), plain_bias = bias_.detach().clone();
  const auto skipping = make();
  auto* skipper = dynamic_cast<orchestrate::SkipsOnDevice*>(skipping.get());
  if (skipper == nullptr) return;  // the host reads each check before stepping it
  for (int step = 0; step < 4; ++step) {
    if (step == 1) {
      skipping->zero_grad();
      loss().backward();
      for (auto* p : {&weights_, &bias_}) p->mutable_grad().fill_(std::numeric_limits<float>::infinity());
      skipper->skip_next_step_if(at::ones({}));
      skipping->step();
    }
    skipper->skip_next_step_if(at::zeros({}));
    take_steps(*skipping, 1);
  }
  const auto skipped_weights = weights_.detach().clone(), skipped_bias = bias_.detach().clone();
  {
    at::NoGradGuard no_grad;
    weights_.copy_(plain_weights);
    bias_.copy_(plain_bias);
  }
  take_steps(*make(), 4);
  EXPECT_TRUE(skipped_weights.equal(weights_.detach())) << "a skipped step left a trace";
  EXPECT_TRUE(skipped_bias.equal(bias_.detach())) << "a skipped step left a trace";
}

TEST_P(OptimizerConformance, DeclaresARealLearningRate) {
  const auto* lr = registry().optimizers().get(GetParam()).info.schema.find(orchestrate::ParamRole::learning_rate);
  ASSERT_NE(lr, nullptr) << "the host reads the key of role learning_rate as the base lr the schedule scales";
  EXPECT_EQ(lr->type, orchestrate::ParamType::real);
}

TEST_P(OptimizerConformance, MakesOneParamGroupPerContextGroupWithTheScaledLr) {
  const auto optimizer = make();
  ASSERT_NE(optimizer, nullptr);
  ASSERT_EQ(optimizer->param_groups().size(), 2u);
  const auto& schema = registry().optimizers().get(GetParam()).info.schema;
  const double lr = params_for(ComponentKind::optimizer, GetParam()).real(schema.find(orchestrate::ParamRole::learning_rate)->name);
  EXPECT_DOUBLE_EQ(optimizer->param_groups()[0].options().get_lr(), 2.0 * lr);
  EXPECT_DOUBLE_EQ(optimizer->param_groups()[1].options().get_lr(), lr);
  EXPECT_TRUE(optimizer->param_groups()[0].params()[0].is_same(weights_));
  EXPECT_TRUE(optimizer->param_groups()[1].params()[0].is_same(bias_));
}

TEST_P(OptimizerConformance, DefaultsReduceAQuadraticIn20Steps) {
  const auto optimizer = make();
  const double before = loss().item<double>();
  take_steps(*optimizer, 20);
  const double after = loss().item<double>();
  EXPECT_TRUE(std::isfinite(after));
  EXPECT_LT(after, before);
}

TEST_P(OptimizerConformance, FollowsTheLrSetOnEachParamGroup) {
  const auto optimizer = make();
  std::vector<double> base;
  for (auto& group : optimizer->param_groups()) base.push_back(group.options().get_lr());
  const auto weights = weights_.detach().clone();
  const auto bias = bias_.detach().clone();

  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  take_steps(*optimizer, 5);
  EXPECT_TRUE(weights_.detach().equal(weights)) << "lr 0 on every param group still moved the weights";
  EXPECT_TRUE(bias_.detach().equal(bias)) << "lr 0 on every param group still moved the bias";

  // Only the second group gets its lr back: only the bias may move.
  optimizer->param_groups()[1].options().set_lr(base[1]);
  take_steps(*optimizer, 1);
  EXPECT_TRUE(weights_.detach().equal(weights)) << "group 0 at lr 0 moved";
  EXPECT_FALSE(bias_.detach().equal(bias)) << "restoring group 1's lr did not move its parameter";
}

INSTANTIATE_TEST_SUITE_P(All, OptimizerConformance, testing::ValuesIn(selected_names(ComponentKind::optimizer)),
                         name_of_param);

}  // namespace

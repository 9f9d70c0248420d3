// The optimizer wrapper contract.
// Part of share/doc/design.md's promise that each kind has a conformance test
// every plugin of that kind passes; run on the components conformance_plugins.h
// selected (`orchestrate conformance`).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "orchestrate/optimizer.h"
#include "orchestrate/optimizer_wrapper.h"

#include "conformance/conformance_plugins.h"
#include "conformance/optimizer_groups.h"

namespace {

using orchestrate::ComponentKind;
using namespace orchestrate::conformance;  // registry(), selected_names(), params_for(), ...

// The wrapper under test over a plain SGD at lr 0.1, driven as the host
// drives it, on a weight vector and a bias in the two groups the host forms.
class WrapperConformance : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const auto& entry = registry().optimizer_wrappers().get(GetParam());
    wrapper_ = entry.create(params_for(ComponentKind::optimizer_wrapper, GetParam()),
                            orchestrate::WrapperContext{context_.groups, 0.1});
    std::vector<torch::optim::OptimizerParamGroup> groups;
    for (const auto& group : context_.groups)
      groups.emplace_back(orchestrate::tensors_of(group), std::make_unique<torch::optim::SGDOptions>(0.1));
    base_ = std::make_unique<torch::optim::SGD>(groups, torch::optim::SGDOptions(0.1));
  }
  // Update `index`: backward of a quadratic, the wrapper around the base
  // step, with the skip flag; `overflowed` makes the gradients inf, sets the
  // flag and skips the base step, as an optimizer skipping on the device does.
  void update(std::int64_t index, bool overflowed = false) {
    base_->zero_grad();
    ((weights_ * weights_).sum() + (bias_ * bias_).sum()).backward();
    if (overflowed)
      for (auto* p : {&weights_, &bias_}) p->mutable_grad().fill_(std::numeric_limits<float>::infinity());
    orchestrate::UpdateView view{*base_, metrics_, index, at::full({}, overflowed ? 1.0 : 0.0)};
    wrapper_->before_step(view);
    if (!overflowed) base_->step();
    wrapper_->after_step(view);
  }
  void set_lr(double lr) {
    for (auto& group : base_->param_groups()) group.options().set_lr(lr);
  }

  at::Tensor weights_ = at::tensor(std::vector<float>{1.0f, -2.0f, 3.0f}).requires_grad_();
  at::Tensor bias_ = at::tensor(std::vector<float>{0.5f}).requires_grad_();
  orchestrate::OptimizerContext context_ = two_groups(weights_, bias_);
  std::unique_ptr<orchestrate::OptimizerWrapper> wrapper_;
  std::unique_ptr<torch::optim::SGD> base_;
  std::map<std::string, at::Tensor> metrics_;
};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(WrapperConformance);

// Every wrapper keeps the weights finite and moves them; with lr 0 it
// leaves them alone.
TEST_P(WrapperConformance, DrivenLikeTheHostItStepsAndHonoursLrZero) {
  ASSERT_NE(wrapper_, nullptr);
  const auto start = weights_.detach().clone();
  set_lr(0.0);
  update(0);
  EXPECT_TRUE(weights_.detach().equal(start)) << "lr 0 moved the weights";
  set_lr(0.1);
  for (int i = 1; i <= 3; ++i) update(i);
  EXPECT_TRUE(weights_.detach().isfinite().all().item<bool>());
  EXPECT_FALSE(weights_.detach().equal(start));
  for (const auto& [name, value] : metrics_) {
    EXPECT_EQ(name.rfind("train/", 0), 0u) << name << ": wrapper metrics are train/*";
    EXPECT_EQ(value.dim(), 0) << name << ": a metric is a 0-dim tensor";
  }
}

// A wrapper that declares only_rewrites_gradients or honours_skip_flag runs
// on updates the optimizer then skips on the device: around such an update
// (inf gradients, no base step, the flag at 1) the weights and its state
// stay as they were.
TEST_P(WrapperConformance, OneThatRunsOnSkippedUpdatesLeavesThemNoTrace) {
  const auto& rules = registry().optimizer_wrappers().get(GetParam()).meta;
  if (!rules.only_rewrites_gradients && !rules.honours_skip_flag) return;  // the host reads the check first
  ASSERT_NE(wrapper_, nullptr);
  update(0);
  const auto weights_before = weights_.detach().clone();
  const auto bias_before = bias_.detach().clone();
  const auto state_before = wrapper_->state_dict();
  update(1, /*overflowed=*/true);
  EXPECT_TRUE(weights_.detach().equal(weights_before)) << "the skipped update moved the weights";
  EXPECT_TRUE(bias_.detach().equal(bias_before)) << "the skipped update moved the bias";
  const auto state_after = wrapper_->state_dict();
  ASSERT_EQ(state_after.size(), state_before.size());
  for (const auto& [name, value] : state_before)
    EXPECT_TRUE(state_after.count(name) && state_after.at(name).equal(value)) << name << " changed on a skipped update";
}

INSTANTIATE_TEST_SUITE_P(All, WrapperConformance,
                         testing::ValuesIn(selected_names(ComponentKind::optimizer_wrapper)), name_of_param);

}  // namespace

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

class WrapperConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(WrapperConformance);

// Every wrapper, driven as the host drives it over a plain SGD, keeps the
// weights finite and moves them; with lr 0 it leaves them alone.
TEST_P(WrapperConformance, DrivenLikeTheHostItStepsAndHonoursLrZero) {
  const auto& entry = registry().optimizer_wrappers().get(GetParam());
  auto weights = at::tensor(std::vector<float>{1.0f, -2.0f, 3.0f}).requires_grad_();
  auto bias = at::tensor(std::vector<float>{0.5f}).requires_grad_();
  const auto context = two_groups(weights, bias);
  orchestrate::WrapperContext wrapper_context{context.groups, 0.1};
  const auto wrapper = entry.create(params_for(ComponentKind::optimizer_wrapper, GetParam()), wrapper_context);
  ASSERT_NE(wrapper, nullptr);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  for (const auto& group : context.groups)
    groups.emplace_back(orchestrate::tensors_of(group), std::make_unique<torch::optim::SGDOptions>(0.1));
  torch::optim::SGD base(groups, torch::optim::SGDOptions(0.1));
  std::map<std::string, at::Tensor> metrics;
  auto update = [&](double lr, std::int64_t index) {
    for (auto& group : base.param_groups()) group.options().set_lr(lr);
    base.zero_grad();
    ((weights * weights).sum() + (bias * bias).sum()).backward();
    orchestrate::UpdateView view{base, metrics, index};
    wrapper->before_step(view);
    base.step();
    wrapper->after_step(view);
  };
  const auto start = weights.detach().clone();
  update(0.0, 0);
  EXPECT_TRUE(weights.detach().equal(start)) << "lr 0 moved the weights";
  for (int i = 1; i <= 3; ++i) update(0.1, i);
  EXPECT_TRUE(weights.detach().isfinite().all().item<bool>());
  EXPECT_FALSE(weights.detach().equal(start));
  for (const auto& [name, value] : metrics) {
    EXPECT_EQ(name.rfind("train/", 0), 0u) << name << ": wrapper metrics are train/*";
    EXPECT_EQ(value.dim(), 0) << name << ": a metric is a 0-dim tensor";
  }
}

// A wrapper that declares only_rewrites_gradients runs on updates the
// optimizer then skips on the device: around such an update (inf
// gradients, no base step) the weights and its state stay as they were.
TEST_P(WrapperConformance, OneThatOnlyRewritesGradientsLeavesASkippedUpdateNoTrace) {
  const auto& entry = registry().optimizer_wrappers().get(GetParam());
  if (!entry.meta.only_rewrites_gradients) return;  // the host reads the check before stepping it
  auto weights = at::tensor(std::vector<float>{1.0f, -2.0f, 3.0f}).requires_grad_();
  auto bias = at::tensor(std::vector<float>{0.5f}).requires_grad_();
  const auto context = two_groups(weights, bias);
  const auto wrapper = entry.create(params_for(ComponentKind::optimizer_wrapper, GetParam()),
                                    orchestrate::WrapperContext{context.groups, 0.1});
  ASSERT_NE(wrapper, nullptr);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  for (const auto& group : context.groups)
    groups.emplace_back(orchestrate::tensors_of(group), std::make_unique<torch::optim::SGDOptions>(0.1));
  torch::optim::SGD base(groups, torch::optim::SGDOptions(0.1));
  std::map<std::string, at::Tensor> metrics;
  auto update = [&](std::int64_t index, bool overflowed) {
    base.zero_grad();
    ((weights * weights).sum() + (bias * bias).sum()).backward();
    if (overflowed)
      for (auto* p : {&weights, &bias}) p->mutable_grad().fill_(std::numeric_limits<float>::infinity());
    orchestrate::UpdateView view{base, metrics, index};
    wrapper->before_step(view);
    if (!overflowed) base.step();
    wrapper->after_step(view);
  };
  update(0, false);
  const auto weights_before = weights.detach().clone();
  const auto bias_before = bias.detach().clone();
  const auto state_before = wrapper->state_dict();
  update(1, true);
  EXPECT_TRUE(weights.detach().equal(weights_before)) << "the skipped update moved the weights";
  EXPECT_TRUE(bias.detach().equal(bias_before)) << "the skipped update moved the bias";
  const auto state_after = wrapper->state_dict();
  ASSERT_EQ(state_after.size(), state_before.size());
  for (const auto& [name, value] : state_before)
    EXPECT_TRUE(state_after.count(name) && state_after.at(name).equal(value)) << name << " changed on a skipped update";
}

INSTANTIATE_TEST_SUITE_P(All, WrapperConformance,
                         testing::ValuesIn(selected_names(ComponentKind::optimizer_wrapper)), name_of_param);

}  // namespace

// Test helpers shared by the optimizer plugins' tests: build the plugin
// under test's optimizer from its schema defaults and a context the way the
// host forms one.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/optimizer.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/testing/plugin_under_test.h"

namespace orchestrate::optimizer_testing {

using Customize = std::function<void(Params&)>;

// One group holding `weights`, as the host forms it for a model without biases.
inline OptimizerContext one_group(const at::Tensor& weights, double weight_decay = 0.0, double lr_scale = 1.0) {
  ParameterGroup group;
  group.label = "decay";
  group.parameters.push_back({"weight", weights});
  group.weight_decay = weight_decay;
  group.lr_scale = lr_scale;
  return OptimizerContext{{std::move(group)}};
}

// The schema's defaults, changed by `customize`.
inline Params params_for(const std::string& optimizer, const Customize& customize = {}) {
  const auto& entry = testing::plugin_under_test().optimizers().get(optimizer);
  auto params = default_params(entry.info.schema);
  if (customize) customize(params);
  return params;
}

inline std::unique_ptr<torch::optim::Optimizer> create_optimizer(const std::string& optimizer,
                                                                 const OptimizerContext& context,
                                                                 const Customize& customize = {}) {
  const auto& entry = testing::plugin_under_test().optimizers().get(optimizer);
  return entry.create(params_for(optimizer, customize), context);
}

// The problem a schema's rules find in `params`, or "" when none does.
inline std::string rule_problems(const std::string& optimizer, const Customize& customize) {
  const auto& schema = testing::plugin_under_test().optimizers().get(optimizer).info.schema;
  std::string out;
  for (const auto& problem : schema.broken_rules(params_for(optimizer, customize))) out += problem;
  return out;
}

// The contract every factory keeps: one torch group per context group, in
// order, holding the same tensors, starting at lr * lr_scale.
inline void expect_groups_follow_context(const std::string& optimizer, const Customize& customize = {}) {
  auto weight = at::ones({2, 2}).requires_grad_();
  auto bias = at::ones({2}).requires_grad_();
  ParameterGroup decay{"decay", {{"fc.weight", weight}}, 0.5, 0.01, false};
  ParameterGroup no_decay{"no_decay", {{"fc.bias", bias}}, 2.0, 0.0, true};
  const OptimizerContext context{{decay, no_decay}};
  const auto params = params_for(optimizer, customize);
  const auto created = create_optimizer(optimizer, context, customize);
  ASSERT_NE(created, nullptr);
  const auto& groups = created->param_groups();
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_EQ(groups[0].params().size(), 1u);
  ASSERT_EQ(groups[1].params().size(), 1u);
  EXPECT_TRUE(groups[0].params()[0].is_same(weight));
  EXPECT_TRUE(groups[1].params()[0].is_same(bias));
  EXPECT_DOUBLE_EQ(groups[0].options().get_lr(), params.real("lr") * 0.5);
  EXPECT_DOUBLE_EQ(groups[1].options().get_lr(), params.real("lr") * 2.0);
}

inline std::vector<double> values_of(const at::Tensor& tensor) {
  const auto flat = tensor.detach().to(at::kDouble).contiguous();
  return {flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel()};
}

// Minimises f(w) = 0.5 * sum(curvature * w^2) (gradient curvature * w) and
// returns w after each step.
inline std::vector<std::vector<double>> quadratic_trajectory(torch::optim::Optimizer& optimizer, const at::Tensor& w,
                                                             const at::Tensor& curvature, int steps) {
  std::vector<std::vector<double>> out;
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    (0.5 * curvature * w * w).sum().backward();
    optimizer.step();
    out.push_back(values_of(w));
  }
  return out;
}

}  // namespace orchestrate::optimizer_testing

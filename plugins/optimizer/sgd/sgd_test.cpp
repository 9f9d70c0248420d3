#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/plugin.h"
#include "plugin_under_test.h"


namespace {

std::unique_ptr<torch::optim::Optimizer> make_sgd(const at::Tensor& weights,
                                                  const std::function<void(orchestrate::Params&)>& customize = {}) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.optimizers().get("sgd");
  auto params = orchestrate::default_params(entry.info.schema);
  if (customize) customize(params);
  return entry.create(params, {weights});
}

at::Tensor weights(std::vector<double> values) { return at::tensor(values, at::kDouble).requires_grad_(); }

// f(w) = 0.5 * sum(curvature * w^2): gradient curvature * w, minimum 0 at w = 0.
double quadratic(const at::Tensor& w, const at::Tensor& curvature) {
  return (0.5 * curvature * w * w).sum().item<double>();
}

void take_steps(torch::optim::Optimizer& optimizer, const at::Tensor& w, const at::Tensor& curvature, int steps) {
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    (0.5 * curvature * w * w).sum().backward();
    optimizer.step();
  }
}

std::vector<double> values_of(const at::Tensor& w) {
  const auto contiguous = w.detach().contiguous();
  return {contiguous.data_ptr<double>(), contiguous.data_ptr<double>() + contiguous.numel()};
}

TEST(SgdOptimizer, StepsAreLrTimesGradient) {
  auto w = weights({1.0, -2.0});
  const auto curvature = at::tensor(std::vector<double>{1.0, 4.0});
  auto optimizer = make_sgd(w, [](orchestrate::Params& p) { p.set("lr", 0.1); });
  take_steps(*optimizer, w, curvature, 1);
  EXPECT_DOUBLE_EQ(values_of(w)[0], 0.9);   // 1 - 0.1 * 1
  EXPECT_DOUBLE_EQ(values_of(w)[1], -1.2);  // -2 - 0.1 * (4 * -2)
  take_steps(*optimizer, w, curvature, 2);
  EXPECT_NEAR(values_of(w)[0], 0.729, 1e-12);
  EXPECT_NEAR(values_of(w)[1], -0.432, 1e-12);
}

TEST(SgdOptimizer, DefaultsReduceAQuadratic) {
  auto w = weights({1.0, -2.0});
  const auto curvature = at::tensor(std::vector<double>{1.0, 4.0});
  auto optimizer = make_sgd(w);
  const double before = quadratic(w, curvature);
  take_steps(*optimizer, w, curvature, 20);
  // Each step scales w_i by (1 - 0.01 * curvature_i).
  EXPECT_NEAR(values_of(w)[0], std::pow(0.99, 20), 1e-12);
  EXPECT_LT(quadratic(w, curvature), 0.5 * before);
}

TEST(SgdOptimizer, WeightDecayAddsAnL2Term) {
  auto w = weights({1.0});
  auto optimizer = make_sgd(w, [](orchestrate::Params& p) {
    p.set("lr", 0.1);
    p.set("weight_decay", 0.5);
  });
  take_steps(*optimizer, w, at::ones({1}, at::kDouble), 1);
  EXPECT_DOUBLE_EQ(values_of(w)[0], 0.85);  // 1 - 0.1 * (1 + 0.5 * 1)
}

TEST(SgdOptimizer, HonoursLrSetOnParamGroups) {
  auto w = weights({1.0});
  const auto curvature = at::ones({1}, at::kDouble);
  auto optimizer = make_sgd(w);
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  take_steps(*optimizer, w, curvature, 3);
  EXPECT_DOUBLE_EQ(values_of(w)[0], 1.0);
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.25);
  take_steps(*optimizer, w, curvature, 1);
  EXPECT_DOUBLE_EQ(values_of(w)[0], 0.75);
}

TEST(SgdOptimizer, SchemaRejectsZeroLr) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& schema = registry.optimizers().get("sgd").info.schema;
  EXPECT_EQ(schema.find("lr")->check(0.0), "must be > 0");
  EXPECT_EQ(schema.find("lr")->check(1e-9), "");
}

}  // namespace

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <functional>
#include <memory>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/plugin.h"
#include "plugin_under_test.h"


namespace {

std::unique_ptr<torch::optim::Optimizer> make_momentum(
    const at::Tensor& weights, const std::function<void(orchestrate::Params&)>& customize = {}) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.optimizers().get("momentum");
  auto params = orchestrate::default_params(entry.info.schema);
  params.set("lr", 0.1);
  if (customize) customize(params);
  return entry.create(params, {weights});
}

at::Tensor weights(std::vector<double> values) { return at::tensor(values, at::kDouble).requires_grad_(); }

// Minimises f(w) = 0.5 * w^2 (gradient w) and returns w after each step.
std::vector<double> trajectory(torch::optim::Optimizer& optimizer, const at::Tensor& w, int steps) {
  std::vector<double> out;
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    (0.5 * w * w).sum().backward();
    optimizer.step();
    out.push_back(w.item<double>());
  }
  return out;
}

// By hand: v1 = g1 = 1, w1 = 1 - 0.1 * 1 = 0.9; v2 = 0.9 * 1 + 0.9 = 1.8,
// w2 = 0.9 - 0.1 * 1.8 = 0.72. Plain SGD would give 0.9, then 0.81.
TEST(MomentumOptimizer, HeavyBallMatchesHandComputedSteps) {
  auto w = weights({1.0});
  auto optimizer = make_momentum(w);
  const auto steps = trajectory(*optimizer, w, 2);
  EXPECT_NEAR(steps[0], 0.9, 1e-12);
  EXPECT_NEAR(steps[1], 0.72, 1e-12);
}

TEST(MomentumOptimizer, ZeroMomentumIsPlainSgd) {
  auto w = weights({1.0});
  auto optimizer = make_momentum(w, [](orchestrate::Params& p) { p.set("momentum", 0.0); });
  const auto steps = trajectory(*optimizer, w, 2);
  EXPECT_NEAR(steps[0], 0.9, 1e-12);
  EXPECT_NEAR(steps[1], 0.81, 1e-12);
}

// Nesterov steps along g + momentum * v: w1 = 1 - 0.1 * (1 + 0.9 * 1) = 0.81;
// v2 = 0.9 * 1 + 0.81 = 1.71, w2 = 0.81 - 0.1 * (0.81 + 0.9 * 1.71) = 0.5751.
TEST(MomentumOptimizer, NesterovMatchesHandComputedSteps) {
  auto w = weights({1.0});
  auto optimizer = make_momentum(w, [](orchestrate::Params& p) { p.set("nesterov", true); });
  const auto steps = trajectory(*optimizer, w, 2);
  EXPECT_NEAR(steps[0], 0.81, 1e-12);
  EXPECT_NEAR(steps[1], 0.5751, 1e-12);
}

TEST(MomentumOptimizer, WeightDecayAddsAnL2Term) {
  auto w = weights({1.0});
  auto optimizer = make_momentum(w, [](orchestrate::Params& p) { p.set("weight_decay", 0.5); });
  const auto steps = trajectory(*optimizer, w, 2);
  EXPECT_NEAR(steps[0], 0.85, 1e-12);    // g = 1 + 0.5
  EXPECT_NEAR(steps[1], 0.5875, 1e-12);  // v = 0.9 * 1.5 + 0.85 * 1.5
}

TEST(MomentumOptimizer, DefaultsReduceAQuadraticFasterThanPlainSgd) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.optimizers().get("momentum");
  auto w = weights({1.0});
  auto optimizer = entry.create(orchestrate::default_params(entry.info.schema), {w});
  // 20 steps of lr 0.01, momentum 0.9 (PyTorch gives the same); plain SGD
  // with that lr would only reach 0.99^20 = 0.818.
  EXPECT_NEAR(trajectory(*optimizer, w, 20).back(), 0.1178221776, 1e-9);
}

TEST(MomentumOptimizer, HonoursLrSetOnParamGroups) {
  auto w = weights({1.0});
  auto optimizer = make_momentum(w);
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  EXPECT_DOUBLE_EQ(trajectory(*optimizer, w, 3).back(), 1.0);
}

TEST(MomentumOptimizer, InconsistentParamsAreRecipeErrors) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& schema = registry.optimizers().get("momentum").info.schema;
  EXPECT_EQ(schema.find("lr")->check(0.0), "must be > 0");
  EXPECT_THROW(make_momentum(weights({1.0}),
                             [](orchestrate::Params& p) {
                               p.set("nesterov", true);
                               p.set("momentum", 0.0);
                             }),
               orchestrate::RecipeError);
}

}  // namespace

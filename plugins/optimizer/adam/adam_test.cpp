#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/adam.h>

#include <functional>
#include <memory>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/plugin.h"
#include "plugin_under_test.h"


namespace {

std::unique_ptr<torch::optim::Optimizer> make_adam(const at::Tensor& weights,
                                                   const std::function<void(orchestrate::Params&)>& customize = {}) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.optimizers().get("adam");
  auto params = orchestrate::default_params(entry.info.schema);
  if (customize) customize(params);
  return entry.create(params, {weights});
}

at::Tensor weights(std::vector<double> values) { return at::tensor(values, at::kDouble).requires_grad_(); }

// Minimises f(w) = 0.5 * sum(curvature * w^2) and returns w after each step.
std::vector<std::vector<double>> trajectory(torch::optim::Optimizer& optimizer, const at::Tensor& w,
                                            const at::Tensor& curvature, int steps) {
  std::vector<std::vector<double>> out;
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    (0.5 * curvature * w * w).sum().backward();
    optimizer.step();
    const auto values = w.detach().contiguous();
    out.emplace_back(values.data_ptr<double>(), values.data_ptr<double>() + values.numel());
  }
  return out;
}

void set_lr(orchestrate::Params& params) { params.set("lr", 0.1); }

// With bias correction the first step is lr * g / |g|, whatever the gradient's size.
TEST(AdamOptimizer, FirstStepMovesEveryWeightByLr) {
  auto w = weights({1.0, -2.0});
  auto optimizer = make_adam(w, set_lr);
  const auto steps = trajectory(*optimizer, w, at::tensor(std::vector<double>{1.0, 4.0}), 1);
  EXPECT_NEAR(steps[0][0], 0.9, 1e-8);
  EXPECT_NEAR(steps[0][1], -1.9, 1e-8);
}

// Second step by hand (g1 = 1, g2 = 0.9): m = 0.18 / (1 - 0.9^2) = 0.947368,
// v = 0.001809 / (1 - 0.999^2) = 0.904952, w2 = 0.9 - 0.1 * m / sqrt(v).
TEST(AdamOptimizer, SecondStepMatchesHandComputation) {
  auto w = weights({1.0});
  auto optimizer = make_adam(w, set_lr);
  EXPECT_NEAR(trajectory(*optimizer, w, at::ones({1}, at::kDouble), 2)[1][0], 0.8004122297, 1e-9);
}

TEST(AdamOptimizer, Beta1ControlsTheMomentum) {
  auto w = weights({1.0});
  auto optimizer = make_adam(w, [](orchestrate::Params& p) {
    p.set("lr", 0.1);
    p.set("beta1", 0.0);
  });
  // No running mean: m = g2 = 0.9, so w2 = 0.9 - 0.1 * 0.9 / sqrt(0.904952).
  EXPECT_NEAR(trajectory(*optimizer, w, at::ones({1}, at::kDouble), 2)[1][0], 0.8053916182, 1e-9);
}

TEST(AdamOptimizer, PassesEveryParamToTorch) {
  auto optimizer = make_adam(weights({1.0}), [](orchestrate::Params& p) {
    p.set("lr", 0.02);
    p.set("beta1", 0.8);
    p.set("beta2", 0.99);
    p.set("eps", 1e-6);
    p.set("weight_decay", 0.01);
    p.set("amsgrad", true);
  });
  const auto& options = static_cast<const torch::optim::AdamOptions&>(optimizer->param_groups()[0].options());
  EXPECT_DOUBLE_EQ(options.lr(), 0.02);
  EXPECT_DOUBLE_EQ(std::get<0>(options.betas()), 0.8);
  EXPECT_DOUBLE_EQ(std::get<1>(options.betas()), 0.99);
  EXPECT_DOUBLE_EQ(options.eps(), 1e-6);
  EXPECT_DOUBLE_EQ(options.weight_decay(), 0.01);
  EXPECT_TRUE(options.amsgrad());
}

TEST(AdamOptimizer, DefaultsReduceAQuadratic) {
  auto w = weights({1.0, -2.0});
  const auto curvature = at::tensor(std::vector<double>{1.0, 4.0});
  auto optimizer = make_adam(w);
  const auto steps = trajectory(*optimizer, w, curvature, 20);
  // lr 0.001 moves each weight about 0.001 per step towards 0.
  EXPECT_NEAR(steps.back()[0], 1.0 - 20 * 0.001, 1e-4);
  EXPECT_NEAR(steps.back()[1], -2.0 + 20 * 0.001, 1e-4);
}

TEST(AdamOptimizer, HonoursLrSetOnParamGroups) {
  auto w = weights({1.0});
  auto optimizer = make_adam(w, set_lr);
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  EXPECT_DOUBLE_EQ(trajectory(*optimizer, w, at::ones({1}, at::kDouble), 3).back()[0], 1.0);
}

// Checked by the host against the schema, so the error carries the recipe's file:line.
TEST(AdamOptimizer, SchemaRejectsZeroLrAndBetaOfOne) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& schema = registry.optimizers().get("adam").info.schema;
  EXPECT_EQ(schema.find("lr")->check(0.0), "must be > 0");
  EXPECT_EQ(schema.find("beta2")->check(1.0), "must be < 1");
  EXPECT_EQ(schema.find("beta2")->check(0.999), "");
  EXPECT_EQ(schema.find("beta1")->range_text(), "[0, 1)");
}

}  // namespace

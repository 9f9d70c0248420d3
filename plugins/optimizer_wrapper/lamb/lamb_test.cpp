#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "../common/wrapper_test_support.h"
#include "orchestrate/error.h"
#include "orchestrate/optimizer_wrapper.h"

namespace {

using namespace orchestrate::testing;
using orchestrate::WrapperContext;

constexpr double kLr = 0.01;
constexpr double kBeta1 = 0.8, kBeta2 = 0.95, kEps = 1e-6;
constexpr double kDecay = 0.05;

at::Tensor weights(std::vector<double> values, std::vector<std::int64_t> shape) {
  return at::tensor(values, at::kDouble).reshape(shape).requires_grad_();
}

at::Tensor gradient_for(const at::Tensor& w, double offset) {
  return (0.3 * w.detach() + offset * at::arange(w.numel(), at::kDouble).reshape(w.sizes())).sin();
}

struct Model {
  at::Tensor kernel = weights({0.5, -1.0, 2.0, 0.25, -0.75, 1.5}, {2, 3});
  at::Tensor dense = weights({0.1, 0.2, -0.3, 0.4}, {4});
  at::Tensor frozen = weights({3.0, -3.0}, {2});
  at::Tensor bias = weights({0.05, -0.02, 0.01}, {3});

  WrapperContext context(double bias_decay = 0.0) const {
    WrapperContext out;
    out.groups.push_back(parameter_group("decay", {kernel, dense, frozen}, kDecay, false));
    out.groups.push_back(parameter_group("no_decay", {bias}, bias_decay, true, 0.5));
    out.base_lr = kLr;
    return out;
  }
  void set_gradients() {
    kernel.mutable_grad() = gradient_for(kernel, 0.7);
    dense.mutable_grad() = gradient_for(dense, -0.4);
    bias.mutable_grad() = gradient_for(bias, 1.1);
  }
};

torch::optim::AdamOptions adam_options() {
  return torch::optim::AdamOptions(kLr).betas(std::make_tuple(kBeta1, kBeta2)).eps(kEps);
}

std::unique_ptr<torch::optim::Adam> adam(const WrapperContext& context) {
  return base_optimizer_without_decay<torch::optim::Adam>(context, adam_options());
}

// LAMB, Algorithm 2 of You et al. 2019 (https://arxiv.org/abs/1904.00962),
// one tensor, by hand, phi the identity:
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   m_hat = m / (1 - b1^t);  v_hat = v / (1 - b2^t)
//   r = m_hat / (sqrt(v_hat) + eps) + wd x
//   x = x - lr * ||x|| / ||r|| * r        (ratio 1 if a norm is 0)
// A tensor excluded from adaptation takes the plain Adam step (no ratio).
struct ReferenceTensor {
  at::Tensor x, m, v;
  double lr;
  bool excluded;
  int t = 0;
  double last_ratio = 1.0;

  void step(const at::Tensor& g) {
    ++t;
    m = kBeta1 * m + (1 - kBeta1) * g;
    v = kBeta2 * v + (1 - kBeta2) * g * g;
    const auto m_hat = m / (1 - std::pow(kBeta1, t));
    const auto v_hat = v / (1 - std::pow(kBeta2, t));
    auto r = m_hat / (v_hat.sqrt() + kEps);
    if (excluded) {
      x = x - lr * r;
      return;
    }
    r = r + kDecay * x;
    const double x_norm = x.norm().item<double>(), r_norm = r.norm().item<double>();
    last_ratio = (x_norm > 0 && r_norm > 0) ? x_norm / r_norm : 1.0;
    x = x - lr * last_ratio * r;
  }
};

ReferenceTensor reference_of(const at::Tensor& w, double lr, bool excluded) {
  const auto x = w.detach().clone();
  return {x, at::zeros_like(x), at::zeros_like(x), lr, excluded};
}

TEST(LambWrapper, AdamBaseMatchesThePapersAlgorithm) {
  Model model;
  const auto context = model.context();
  auto optimizer = adam(context);
  auto lamb = make_wrapper("lamb", default_wrapper_params("lamb"), context);
  auto kernel = reference_of(model.kernel, kLr, false);
  auto dense = reference_of(model.dense, kLr, false);
  auto bias = reference_of(model.bias, kLr * 0.5, true);
  const auto frozen_before = model.frozen.detach().clone();
  for (int update = 0; update < 5; ++update) {
    model.set_gradients();
    kernel.step(model.kernel.grad().clone());
    dense.step(model.dense.grad().clone());
    bias.step(model.bias.grad().clone());
    run_update(*lamb, *optimizer, update);
    // The subtraction that recovers Adam's step costs a few digits (lamb.cpp).
    ASSERT_TRUE(at::allclose(model.kernel, kernel.x, 0, 1e-12)) << "update " << update;
    ASSERT_TRUE(at::allclose(model.dense, dense.x, 0, 1e-12)) << "update " << update;
    ASSERT_TRUE(at::allclose(model.bias, bias.x, 0, 1e-15)) << "update " << update;
  }
  EXPECT_TRUE(at::equal(model.frozen, frozen_before));  // no gradient: no decay either
  // The ratio really acted on both tensors.
  EXPECT_GT(std::abs(kernel.last_ratio - 1), 0.1);
  EXPECT_GT(std::abs(dense.last_ratio - 1), 0.1);
}

// A recipe that gives an excluded group decay gets AdamW's decoupled decay.
TEST(LambWrapper, ExcludedGroupWithDecayMatchesAdamW) {
  Model model;
  auto twin = model.bias.detach().clone().requires_grad_();
  const auto context = model.context(0.1);
  auto optimizer = adam(context);
  auto lamb = make_wrapper("lamb", default_wrapper_params("lamb"), context);
  torch::optim::AdamW adamw({twin}, torch::optim::AdamWOptions(kLr * 0.5)
                                        .betas(std::make_tuple(kBeta1, kBeta2))
                                        .eps(kEps)
                                        .weight_decay(0.1));
  for (int update = 0; update < 3; ++update) {
    model.set_gradients();
    twin.mutable_grad() = model.bias.grad().clone();
    adamw.step();
    run_update(*lamb, *optimizer, update);
    ASSERT_TRUE(at::allclose(model.bias, twin, 0, 1e-15)) << "update " << update;
  }
}

TEST(LambWrapper, ZeroWeightsTakeThePlainAdamStep) {
  auto zero = weights({0.0, 0.0, 0.0}, {3});
  auto twin = zero.detach().clone().requires_grad_();
  WrapperContext context;
  context.groups.push_back(parameter_group("decay", {zero}, kDecay, false));
  auto optimizer = adam(context);
  auto lamb = make_wrapper("lamb", default_wrapper_params("lamb"), context);
  torch::optim::Adam plain({twin}, adam_options());
  zero.mutable_grad() = gradient_for(zero, 0.5);
  twin.mutable_grad() = zero.grad().clone();
  plain.step();
  const auto metrics = run_update(*lamb, *optimizer);
  EXPECT_TRUE(at::allclose(zero, twin, 0, 1e-15));
  EXPECT_DOUBLE_EQ(metrics.at("train/lamb_trust_ratio").item<double>(), 1.0);
}

TEST(LambWrapper, LogsTheMeanTrustRatioAsADeviceTensor) {
  Model model;
  const auto context = model.context();
  auto optimizer = adam(context);
  auto lamb = make_wrapper("lamb", default_wrapper_params("lamb"), context);
  auto kernel = reference_of(model.kernel, kLr, false);
  auto dense = reference_of(model.dense, kLr, false);
  model.set_gradients();
  kernel.step(model.kernel.grad().clone());
  dense.step(model.dense.grad().clone());
  const auto metrics = run_update(*lamb, *optimizer);
  const auto& logged = metrics.at("train/lamb_trust_ratio");
  EXPECT_EQ(logged.dim(), 0);
  EXPECT_FALSE(logged.requires_grad());
  EXPECT_NEAR(logged.item<double>(), (kernel.last_ratio + dense.last_ratio) / 2, 1e-12);  // bias not counted
}

TEST(LambWrapper, ZeroLrLeavesWeightsAlone) {
  Model model;
  const auto context = model.context();
  auto optimizer = adam(context);
  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  auto lamb = make_wrapper("lamb", default_wrapper_params("lamb"), context);
  const auto kernel_before = model.kernel.detach().clone();
  model.set_gradients();
  run_update(*lamb, *optimizer);
  EXPECT_TRUE(at::equal(model.kernel, kernel_before));
  EXPECT_FALSE(model.kernel.isnan().any().item<bool>());
}

TEST(LambWrapper, AGroupCountMismatchIsAnError) {
  Model model;
  auto context = model.context();
  auto optimizer = adam(context);
  context.groups.pop_back();
  auto lamb = make_wrapper("lamb", default_wrapper_params("lamb"), context);
  model.set_gradients();
  std::map<std::string, at::Tensor> metrics;
  orchestrate::UpdateView view{*optimizer, metrics, 0};
  EXPECT_THROW(lamb->before_step(view), orchestrate::Error);
}

// With the optimizer skipping on the device, the host hands LAMB the flag:
// at 0 it steps bit for bit as without one; at 1 (and no base step) it
// leaves every weight, the decayed excluded group's too, as it was.
TEST(LambWrapper, HonoursTheSkipFlagOfAnOptimizerSkippingOnTheDevice) {
  Model without_flag, with_flag;
  const auto context = without_flag.context(0.1), flagged_context = with_flag.context(0.1);
  auto optimizer = adam(context), flagged_optimizer = adam(flagged_context);
  auto lamb = make_wrapper("lamb", default_wrapper_params("lamb"), context);
  auto flagged_lamb = make_wrapper("lamb", default_wrapper_params("lamb"), flagged_context);
  for (int update = 0; update < 3; ++update) {
    without_flag.set_gradients();
    with_flag.set_gradients();
    run_update(*lamb, *optimizer, update);
    run_update(*flagged_lamb, *flagged_optimizer, update, at::zeros({}));
  }
  EXPECT_TRUE(with_flag.kernel.equal(without_flag.kernel));
  EXPECT_TRUE(with_flag.bias.equal(without_flag.bias)) << "the excluded group's decay";

  const auto kernel = with_flag.kernel.detach().clone(), bias = with_flag.bias.detach().clone();
  with_flag.set_gradients();
  run_update(*flagged_lamb, *flagged_optimizer, 3, at::ones({}));
  EXPECT_TRUE(with_flag.kernel.equal(kernel)) << "a skipped update moved the kernel";
  EXPECT_TRUE(with_flag.bias.equal(bias)) << "a skipped update decayed the bias";
  EXPECT_TRUE(plugin_under_test().optimizer_wrappers().get("lamb").meta.honours_skip_flag);
}

TEST(LambWrapper, DeclaresTrustRatioRules) {
  const auto& entry = plugin_under_test().optimizer_wrappers().get("lamb");
  EXPECT_TRUE(entry.meta.must_come_last);
  EXPECT_FALSE(entry.meta.must_come_first);
  EXPECT_EQ(entry.meta.exclusive_group, "trust_ratio");
  EXPECT_TRUE(entry.meta.takes_over_weight_decay);
  EXPECT_FALSE(entry.meta.micro_batches);
  EXPECT_TRUE(entry.info.schema.specs().empty());
}

}  // namespace

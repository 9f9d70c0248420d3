#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "../common/wrapper_test_support.h"
#include "orchestrate/error.h"
#include "orchestrate/optimizer_wrapper.h"

namespace {

using namespace orchestrate::testing;
using orchestrate::WrapperContext;

constexpr double kLr = 0.5;
constexpr double kMomentum = 0.9;
constexpr double kDecay = 0.01;

at::Tensor weights(std::vector<double> values, std::vector<std::int64_t> shape) {
  return at::tensor(values, at::kDouble).reshape(shape).requires_grad_();
}

// A gradient that depends on the weights, so every update sees a new one.
at::Tensor gradient_for(const at::Tensor& w, double offset) {
  return (0.3 * w.detach() + offset * at::arange(w.numel(), at::kDouble).reshape(w.sizes())).sin();
}

// Two layers with decay and adaptation, one tensor that gets no gradient
// (frozen), and a bias group excluded from adaptation with no decay.
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

std::unique_ptr<torch::optim::SGD> momentum_sgd(const WrapperContext& context) {
  return base_optimizer_without_decay<torch::optim::SGD>(context, torch::optim::SGDOptions(kLr).momentum(kMomentum));
}

orchestrate::Params lars_params(double eta, double epsilon, bool clip = false) {
  auto params = default_wrapper_params("lars");
  params.set("eta", eta);
  params.set("epsilon", epsilon);
  params.set("clip", clip);
  return params;
}

// The MLPerf ResNet-50 LARS reference (mlcommons/training,
// image_classification/tensorflow2/lars_optimizer.py), one tensor, by hand:
//   trust = eta ||w|| / (||g|| + wd ||w|| + eps) if ||w|| > 0 and ||g|| > 0, else 1
//   scaled_lr = lr * trust and g += wd * w, unless the tensor is skipped
//   mom = momentum * mom + scaled_lr * g;  w -= mom
struct ReferenceTensor {
  at::Tensor w;
  at::Tensor mom;
  double lr;
  bool skipped;

  double trust(const at::Tensor& g, double eta, double epsilon) const {
    const double w_norm = w.norm().item<double>(), g_norm = g.norm().item<double>();
    if (skipped || w_norm <= 0 || g_norm <= 0) return 1.0;
    return eta * w_norm / (g_norm + kDecay * w_norm + epsilon);
  }
  void step(const at::Tensor& g, double eta, double epsilon) {
    const double scaled_lr = lr * trust(g, eta, epsilon);
    const at::Tensor decayed = skipped ? g : g + kDecay * w;
    mom = kMomentum * mom + scaled_lr * decayed;
    w = w - mom;
  }
};

ReferenceTensor reference_of(const at::Tensor& w, double lr, bool skipped) {
  return {w.detach().clone(), at::zeros_like(w.detach()), lr, skipped};
}

TEST(LarsWrapper, MomentumUpdatesMatchTheMlperfReference) {
  constexpr double eta = 0.02, epsilon = 1e-3;
  Model model;
  const auto context = model.context();
  auto optimizer = momentum_sgd(context);
  auto lars = make_wrapper("lars", lars_params(eta, epsilon), context);
  auto kernel = reference_of(model.kernel, kLr, false);
  auto dense = reference_of(model.dense, kLr, false);
  auto bias = reference_of(model.bias, kLr * 0.5, true);
  for (int update = 0; update < 4; ++update) {
    model.set_gradients();
    kernel.step(model.kernel.grad().clone(), eta, epsilon);
    dense.step(model.dense.grad().clone(), eta, epsilon);
    bias.step(model.bias.grad().clone(), eta, epsilon);
    run_update(*lars, *optimizer, update);
    ASSERT_TRUE(at::allclose(model.kernel, kernel.w, 0, 1e-12)) << "update " << update;
    ASSERT_TRUE(at::allclose(model.dense, dense.w, 0, 1e-12)) << "update " << update;
    ASSERT_TRUE(at::allclose(model.bias, bias.w, 0, 1e-12)) << "update " << update;
  }
  // The trust ratio really acted: plain momentum would have moved further.
  EXPECT_LT(kernel.trust(model.kernel.grad(), eta, epsilon), 0.9);
}

TEST(LarsWrapper, ExcludedGroupGradientIsUntouched) {
  Model model;
  const auto context = model.context();
  auto optimizer = momentum_sgd(context);
  auto lars = make_wrapper("lars", lars_params(0.001, 0.0), context);
  model.set_gradients();
  const auto bias_gradient = model.bias.grad().clone();
  const auto kernel_gradient = model.kernel.grad().clone();
  std::map<std::string, at::Tensor> metrics;
  orchestrate::UpdateView view{*optimizer, metrics, 0};
  lars->before_step(view);
  EXPECT_TRUE(at::equal(model.bias.grad(), bias_gradient));
  EXPECT_FALSE(at::allclose(model.kernel.grad(), kernel_gradient));
  EXPECT_FALSE(model.frozen.grad().defined());
}

// A recipe that gives norms or biases decay keeps it, without a trust ratio.
TEST(LarsWrapper, ExcludedGroupWithDecayGetsPlainL2) {
  Model model;
  const auto context = model.context(0.1);
  auto optimizer = momentum_sgd(context);
  auto lars = make_wrapper("lars", lars_params(0.001, 0.0), context);
  model.set_gradients();
  const auto expected = model.bias.grad() + 0.1 * model.bias.detach();
  std::map<std::string, at::Tensor> metrics;
  orchestrate::UpdateView view{*optimizer, metrics, 0};
  lars->before_step(view);
  EXPECT_TRUE(at::allclose(model.bias.grad(), expected, 0, 1e-15));
}

TEST(LarsWrapper, TensorsWithoutGradientsStayPut) {
  Model model;
  const auto context = model.context();
  auto optimizer = momentum_sgd(context);
  auto lars = make_wrapper("lars", lars_params(0.001, 0.0), context);
  const auto frozen_before = model.frozen.detach().clone();
  for (int update = 0; update < 2; ++update) {
    model.set_gradients();
    run_update(*lars, *optimizer, update);
  }
  EXPECT_TRUE(at::equal(model.frozen, frozen_before));
}

TEST(LarsWrapper, ZeroWeightsTakeThePlainGradientStep) {
  auto zero = weights({0.0, 0.0, 0.0}, {3});
  WrapperContext context;
  context.groups.push_back(parameter_group("decay", {zero}, kDecay, false));
  auto optimizer = momentum_sgd(context);
  auto lars = make_wrapper("lars", lars_params(0.001, 0.0), context);
  const auto gradient = gradient_for(zero, 0.5);
  zero.mutable_grad() = gradient.clone();
  std::map<std::string, at::Tensor> metrics;
  orchestrate::UpdateView view{*optimizer, metrics, 0};
  lars->before_step(view);
  EXPECT_TRUE(at::allclose(zero.grad(), gradient, 0, 1e-15));  // trust 1, and wd * 0 adds nothing
  EXPECT_DOUBLE_EQ(metrics.at("train/lars_trust_ratio").item<double>(), 1.0);
}

// LARC (NVIDIA apex, apex/parallel/LARC.py) clip mode: the gradient is scaled
// by min(trust / lr, 1), so the local lr, lr * trust, never exceeds lr.
TEST(LarsWrapper, ClipModeCapsTheLocalLrAtTheGlobalLr) {
  constexpr double eta = 1.0;  // large enough that one tensor's trust exceeds lr
  Model model;
  const auto context = model.context();
  auto optimizer = momentum_sgd(context);
  auto lars = make_wrapper("lars", lars_params(eta, 0.0, true), context);
  model.set_gradients();
  bool some_clipped = false, some_not = false;
  std::vector<at::Tensor> expected;
  for (const auto& w : {model.kernel, model.dense}) {
    const auto g = w.grad();
    const double trust =
        eta * w.norm().item<double>() / (g.norm().item<double>() + kDecay * w.norm().item<double>());
    (trust / kLr > 1 ? some_clipped : some_not) = true;
    expected.push_back(std::min(trust / kLr, 1.0) * (g + kDecay * w.detach()));
  }
  ASSERT_TRUE(some_clipped && some_not) << "choose weights that exercise both sides of the cap";
  std::map<std::string, at::Tensor> metrics;
  orchestrate::UpdateView view{*optimizer, metrics, 0};
  lars->before_step(view);
  EXPECT_TRUE(at::allclose(model.kernel.grad(), expected[0], 0, 1e-15));
  EXPECT_TRUE(at::allclose(model.dense.grad(), expected[1], 0, 1e-15));
}

TEST(LarsWrapper, LogsTheMeanTrustRatioAsADeviceTensor) {
  constexpr double eta = 0.02;
  Model model;
  const auto context = model.context();
  auto optimizer = momentum_sgd(context);
  auto lars = make_wrapper("lars", lars_params(eta, 0.0), context);
  model.set_gradients();
  const double kernel_trust = reference_of(model.kernel, kLr, false).trust(model.kernel.grad(), eta, 0.0);
  const double dense_trust = reference_of(model.dense, kLr, false).trust(model.dense.grad(), eta, 0.0);
  const auto metrics = run_update(*lars, *optimizer);
  const auto& logged = metrics.at("train/lars_trust_ratio");
  EXPECT_EQ(logged.dim(), 0);
  EXPECT_FALSE(logged.requires_grad());
  EXPECT_NEAR(logged.item<double>(), (kernel_trust + dense_trust) / 2, 1e-15);  // excluded bias not counted
}

TEST(LarsWrapper, AGroupCountMismatchIsAnError) {
  Model model;
  auto context = model.context();
  auto optimizer = momentum_sgd(context);
  context.groups.pop_back();
  auto lars = make_wrapper("lars", lars_params(0.001, 0.0), context);
  model.set_gradients();
  std::map<std::string, at::Tensor> metrics;
  orchestrate::UpdateView view{*optimizer, metrics, 0};
  EXPECT_THROW(lars->before_step(view), orchestrate::Error);
}

TEST(LarsWrapper, DeclaresTrustRatioRulesAndTheSeedsDefaults) {
  const auto& entry = plugin_under_test().optimizer_wrappers().get("lars");
  EXPECT_TRUE(entry.meta.must_come_last);
  EXPECT_FALSE(entry.meta.must_come_first);
  EXPECT_EQ(entry.meta.exclusive_group, "trust_ratio");
  EXPECT_TRUE(entry.meta.takes_over_weight_decay);
  EXPECT_FALSE(entry.meta.micro_batches);
  const auto params = default_wrapper_params("lars");
  EXPECT_DOUBLE_EQ(params.real("eta"), 0.001);  // MoXing's ratio=0.001, the MLPerf eeta
  EXPECT_DOUBLE_EQ(params.real("epsilon"), 0.0);
  EXPECT_FALSE(params.boolean("clip"));
  EXPECT_EQ(entry.info.schema.find("eta")->check(0.0), "must be > 0");
  EXPECT_NE(entry.info.schema.find("epsilon")->check(-1.0), "");
}

}  // namespace

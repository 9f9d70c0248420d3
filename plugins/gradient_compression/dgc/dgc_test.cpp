// DGC's update rule against the formulas in dgc.cpp's header, and against
// torch::optim::SGD where the two must agree (sparsity 0, masking off).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "orchestrate/gradient_compression.h"
#include "orchestrate/testing/plugin_under_test.h"
#include "sparsity_schedule.h"

namespace {

using orchestrate::CompressedGradient;
using orchestrate::CompressionContext;
using orchestrate::CompressionStep;
using orchestrate::GradientCompressor;
using orchestrate::Params;
using orchestrate::testing::plugin_under_test;

Params dgc_params(std::map<std::string, orchestrate::ParamValue> overrides) {
  Params params;
  for (const auto& spec : plugin_under_test().gradient_compressors().get("dgc").info.schema.specs())
    params.set(spec.name, overrides.count(spec.name) ? overrides.at(spec.name) : *spec.default_value);
  return params;
}

CompressionContext one_group(const std::vector<at::Tensor>& tensors, double weight_decay = 0.0, std::int64_t world = 1) {
  orchestrate::ParameterGroup group;
  group.label = "decay";
  group.weight_decay = weight_decay;
  for (std::size_t i = 0; i < tensors.size(); ++i) group.parameters.push_back({"w" + std::to_string(i), tensors[i]});
  return {{group}, world, 10};
}

std::unique_ptr<GradientCompressor> make_dgc(const Params& params, const CompressionContext& context) {
  return plugin_under_test().gradient_compressors().get("dgc").create(params, context);
}

std::vector<CompressedGradient> compress(GradientCompressor& dgc, std::int64_t update = 0, double epoch = 0) {
  std::map<std::string, at::Tensor> metrics;
  return dgc.compress(CompressionStep{update, epoch, metrics});
}

// What the host makes of one rank's message: the dense gradient it stands for.
at::Tensor densify(const CompressedGradient& message, std::int64_t numel) {
  if (!message.indices.defined()) return message.values.to(at::kDouble);
  return at::zeros({numel}, at::kDouble).index_put_({message.indices.to(at::kLong)}, message.values.to(at::kDouble));
}

at::Tensor doubles(std::vector<double> values) { return at::tensor(values, at::kDouble); }

at::Tensor weight(std::vector<double> values, std::vector<std::int64_t> shape) {
  return at::tensor(values, at::kFloat).reshape(shape).requires_grad_();
}

void set_grad(const at::Tensor& w, std::vector<double> values) {
  const_cast<at::Tensor&>(w).mutable_grad() = at::tensor(values, at::kFloat).reshape(w.sizes());
}

TEST(DgcSparsitySchedule, StagesLastEpochsPerStageThenTheLastHolds) {
  const orchestrate::dgc::SparsitySchedule schedule({0.75, 0.9375, 0.984375, 0.996, 0.999}, 1.0);
  EXPECT_EQ(schedule.at(0.0), 0.75);
  EXPECT_EQ(schedule.at(0.99), 0.75);
  EXPECT_EQ(schedule.at(1.0), 0.9375);
  EXPECT_EQ(schedule.at(3.5), 0.996);
  EXPECT_EQ(schedule.at(4.0), 0.999);
  EXPECT_EQ(schedule.at(90.0), 0.999);
  const orchestrate::dgc::SparsitySchedule halves({0.5, 0.9}, 0.5);
  EXPECT_EQ(halves.at(0.49), 0.5);
  EXPECT_EQ(halves.at(0.5), 0.9);
}

TEST(DgcSparsitySchedule, SendsAtLeastOneElement) {
  EXPECT_EQ(orchestrate::dgc::elements_to_send(1000, 0.999), 1);
  EXPECT_EQ(orchestrate::dgc::elements_to_send(10, 0.999), 1);
  EXPECT_EQ(orchestrate::dgc::elements_to_send(4096, 0.75), 1024);
  EXPECT_EQ(orchestrate::dgc::elements_to_send(100, 0.0), 100);
}

TEST(Dgc, SendsTheLargestEntriesAndKeepsTheRestForLater) {
  auto w = weight({0, 0, 0, 0, 0, 0, 0, 0}, {2, 4});
  auto dgc = make_dgc(dgc_params({{"sparsity", std::vector<double>{0.75}}, {"momentum", 0.0}}), one_group({w}));
  set_grad(w, {0.1, -3.0, 0.2, 0.3, 2.0, 0.0, -0.4, 0.5});
  auto sent = compress(*dgc);
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].indices.defined());
  EXPECT_TRUE(at::allclose(densify(sent[0], 8), doubles({0.0, -3.0, 0, 0, 2.0, 0, 0, 0})));
  // The small entries accumulate: after another identical gradient, v = the
  // unsent first-step entries + g; the two largest of |v| go.
  set_grad(w, {0.1, -3.0, 0.2, 0.3, 2.0, 0.0, -0.4, 0.5});
  sent = compress(*dgc);
  EXPECT_TRUE(at::allclose(densify(sent[0], 8), doubles({0.0, -3.0, 0, 0, 2.0, 0, 0, 0})));
  set_grad(w, {0, 0, 0, 0, 0, 0, 0, 0});
  sent = compress(*dgc);  // now only the residual: 2 x (0.1, 0.2, 0.3, -0.4, 0.5) -> 1.0 and -0.8 lead
  EXPECT_TRUE(at::allclose(densify(sent[0], 8), doubles({0, 0, 0, 0, 0, 0, -0.8, 1.0}), 1e-6, 1e-6));
}

TEST(Dgc, MomentumCorrectionAndFactorMaskingFollowTheWrittenRule) {
  // u <- m u + g; v <- v + u; send top-1 of |v|; v[S] = 0; u[S] = 0.
  auto w = weight({0, 0, 0, 0}, {2, 2});
  auto dgc = make_dgc(dgc_params({{"sparsity", std::vector<double>{0.75}}, {"momentum", 0.5}}), one_group({w}));
  set_grad(w, {1.0, 0.4, 0.0, 0.0});
  auto sent = compress(*dgc);  // u = v = (1, .4, 0, 0): sends 1.0 at 0; u = v = (0, .4, 0, 0)
  EXPECT_TRUE(at::allclose(densify(sent[0], 4), doubles({1.0, 0, 0, 0})));
  set_grad(w, {0.0, 0.0, 0.3, 0.0});
  sent = compress(*dgc);  // u = (0, .2, .3, 0); v = (0, .6, .3, 0): sends .6 at 1
  EXPECT_TRUE(at::allclose(densify(sent[0], 4), doubles({0, 0.6, 0, 0}), 1e-6, 1e-6));
  set_grad(w, {0.0, 0.0, 0.0, 0.0});
  sent = compress(*dgc);  // u = (0, 0, .15, 0) (masked at 1); v = (0, 0, .45, 0): sends .45 at 2
  EXPECT_TRUE(at::allclose(densify(sent[0], 4), doubles({0, 0, 0.45, 0}), 1e-6, 1e-6));
  const auto state = dgc->state_dict();
  EXPECT_TRUE(at::allclose(state.at("momentum/w0").to(at::kDouble), at::zeros({4}, at::kDouble)));
  EXPECT_TRUE(at::allclose(state.at("residual/w0").to(at::kDouble), at::zeros({4}, at::kDouble)));
}

// With nothing held back and no masking, DGC is momentum SGD on the mean
// gradient, weight decay included: torch::optim::SGD is the reference.
void expect_momentum_sgd_parity(bool nesterov, double momentum = 0.9) {
  const double lr = 0.1, weight_decay = 0.01;
  auto matrix = weight({0.5, -1.0, 2.0, 0.25, 1.5, -0.75}, {2, 3});
  auto bias = weight({0.1, -0.2}, {2});
  auto ref_matrix = matrix.detach().clone().requires_grad_();
  auto ref_bias = bias.detach().clone().requires_grad_();
  auto dgc = make_dgc(dgc_params({{"sparsity", std::vector<double>{0.0}},
                                  {"momentum", momentum},
                                  {"nesterov", nesterov},
                                  {"momentum_factor_masking", false}}),
                      one_group({matrix, bias}, weight_decay));
  torch::optim::SGD reference({ref_matrix, ref_bias},
                              torch::optim::SGDOptions(lr).momentum(momentum).nesterov(nesterov).weight_decay(weight_decay));
  for (int step = 0; step < 5; ++step) {
    const auto g_matrix = at::sin(at::arange(6, at::kFloat) * (step + 1)).reshape({2, 3});
    const auto g_bias = at::cos(at::arange(2, at::kFloat) * (step + 1));
    const_cast<at::Tensor&>(matrix).mutable_grad() = g_matrix.clone();
    const_cast<at::Tensor&>(bias).mutable_grad() = g_bias.clone();
    ref_matrix.mutable_grad() = g_matrix.clone();
    ref_bias.mutable_grad() = g_bias.clone();
    const auto sent = compress(*dgc, step);
    {
      at::NoGradGuard no_grad;
      matrix.sub_(lr * densify(sent[0], 6).to(at::kFloat).view({2, 3}));
      bias.sub_(lr * densify(sent[1], 2).to(at::kFloat));
    }
    reference.step();
  }
  EXPECT_TRUE(at::allclose(matrix, ref_matrix, 1e-6, 1e-6)) << matrix << ref_matrix;
  EXPECT_TRUE(at::allclose(bias, ref_bias, 1e-6, 1e-6)) << bias << ref_bias;
}

TEST(Dgc, WithoutSparsityOrMaskingIsTorchMomentumSgd) { expect_momentum_sgd_parity(false); }
TEST(Dgc, WithoutSparsityOrMaskingIsTorchNesterovSgd) { expect_momentum_sgd_parity(true); }
TEST(Dgc, WithoutSparsityOrMomentumIsTorchSgd) { expect_momentum_sgd_parity(false, 0.0); }

TEST(Dgc, VectorsAreSentWholeUnlessAskedToCompressThem) {
  auto matrix = weight(std::vector<double>(100, 0.0), {10, 10});
  auto bias = weight(std::vector<double>(10, 0.0), {10});
  auto dgc = make_dgc(dgc_params({{"sparsity", std::vector<double>{0.99}}}), one_group({matrix, bias}));
  const_cast<at::Tensor&>(matrix).mutable_grad() = at::randn({10, 10});
  const_cast<at::Tensor&>(bias).mutable_grad() = at::randn({10});
  const auto sent = compress(*dgc);
  EXPECT_EQ(sent[0].values.numel(), 1);
  EXPECT_FALSE(sent[1].indices.defined());
  EXPECT_EQ(sent[1].values.numel(), 10);
  auto squeezing = make_dgc(dgc_params({{"sparsity", std::vector<double>{0.9}}, {"compress_vectors", true}}),
                            one_group({matrix, bias}));
  EXPECT_EQ(compress(*squeezing)[1].values.numel(), 1);
}

TEST(Dgc, LocalClippingScalesEachRankToClipNormOverRootRanks) {
  // Four ranks and clip_norm 1: each rank's gradient norm is clipped at 0.5.
  auto w = weight({0, 0, 0, 0}, {2, 2});
  auto dgc = make_dgc(dgc_params({{"sparsity", std::vector<double>{0.0}}, {"momentum", 0.0}, {"clip_norm", 1.0}}),
                      one_group({w}, 0.0, 4));
  set_grad(w, {2.0, 0.0, 0.0, 0.0});
  EXPECT_NEAR(compress(*dgc)[0].values[0].item<double>(), 0.5, 1e-5);
  set_grad(w, {0.3, 0.0, 0.0, 0.0});  // under the threshold: untouched
  EXPECT_NEAR(compress(*dgc)[0].values[0].item<double>(), 0.3, 1e-6);
}

TEST(Dgc, StateRoundTripsSoAResumedRunSendsTheSame) {
  auto w = weight(std::vector<double>(64, 0.0), {8, 8});
  const auto params = dgc_params({{"sparsity", std::vector<double>{0.9}}});
  auto first = make_dgc(params, one_group({w}));
  for (int step = 0; step < 3; ++step) {
    const_cast<at::Tensor&>(w).mutable_grad() = at::randn({8, 8});
    compress(*first, step);
  }
  auto resumed = make_dgc(params, one_group({w}));
  std::map<std::string, at::Tensor> saved;
  for (const auto& [name, tensor] : first->state_dict()) saved[name] = tensor.clone();
  resumed->load_state_dict(saved);
  const_cast<at::Tensor&>(w).mutable_grad() = at::randn({8, 8});
  const auto a = compress(*first, 3), b = compress(*resumed, 3);
  EXPECT_TRUE(at::equal(densify(a[0], 64), densify(b[0], 64)));
  saved.erase("residual/w0");
  EXPECT_THROW(resumed->load_state_dict(saved), orchestrate::Error);
}

TEST(Dgc, LogsTheSparsityAndTheShareSent) {
  auto w = weight(std::vector<double>(1000, 0.0), {10, 100});
  auto dgc = make_dgc(dgc_params({}), one_group({w}, 0.0, 1));
  const_cast<at::Tensor&>(w).mutable_grad() = at::randn({10, 100});
  std::map<std::string, at::Tensor> metrics;
  dgc->compress(CompressionStep{25, 2.5, metrics});  // the third stage
  EXPECT_DOUBLE_EQ(metrics.at("train/dgc_sparsity").item<double>(), 0.984375);
  EXPECT_NEAR(metrics.at("train/dgc_density").item<double>(), 16.0 / 1000.0, 1e-12);
}

TEST(Dgc, RecipeRulesNameTheFix) {
  const auto& rules = plugin_under_test().gradient_compressors().get("dgc").meta;
  EXPECT_TRUE(rules.takes_over_weight_decay);
  EXPECT_EQ(rules.base_optimizer_problem(dgc_params({}), "sgd"), "");
  EXPECT_NE(rules.base_optimizer_problem(dgc_params({}), "momentum").find("set [optimizer] plugin = \"sgd\""),
            std::string::npos);
  EXPECT_EQ(rules.base_optimizer_problem(dgc_params({{"momentum", 0.0}}), "adam"), "");
  const auto& schema = plugin_under_test().gradient_compressors().get("dgc").info.schema;
  EXPECT_NE(schema.broken_rules(dgc_params({{"sparsity", std::vector<double>{1.0}}})).front().find("outside [0, 1)"),
            std::string::npos);
}

}  // namespace

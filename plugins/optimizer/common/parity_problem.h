// The setup of the optimizer parity and resume tests, built identically in
// C++ and in the Python reference: a float32 linear least-squares model
// (weight 3x4, bias 3) on fixed data, with the two parameter groups the host
// forms (the weight with an lr multiplier and weight decay, the bias with
// neither) and an lr that a schedule changes before every step.
//
// Every number crosses to Python as text printed with enough digits to
// round-trip (9 significant digits for a float, 17 for a double), so both
// sides start from bit-identical values without sharing a random generator.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/optimizer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/testing/python_reference.h"

namespace orchestrate::optimizer_testing {

constexpr int kParitySteps = 20;
constexpr double kWeightLrScale = 0.5;
constexpr double kWeightDecay = 0.05;
constexpr double kParityTolerance = 1e-5;  // relative, per parameter element

struct ParityData {
  std::vector<float> weight;   // 3 x 4, the initial values
  std::vector<float> bias;     // 3
  std::vector<float> inputs;   // 8 x 4
  std::vector<float> targets;  // 8 x 3
  std::vector<double> lr_factors;  // the schedule: lr = base lr * factor(step) * lr_scale
};

// Smooth, sign-varying values of no special structure.
inline std::vector<float> wave(int count, double frequency, double phase, double amplitude) {
  std::vector<float> out;
  for (int i = 0; i < count; ++i) out.push_back(static_cast<float>(amplitude * std::sin(frequency * i + phase)));
  return out;
}

inline const ParityData& parity_data() {
  static const ParityData data = [] {
    ParityData d;
    d.weight = wave(12, 1.7, 0.3, 0.4);
    d.bias = wave(3, 2.3, 1.1, 0.2);
    d.inputs = wave(32, 0.9, 0.5, 1.0);
    d.targets = wave(24, 1.3, 2.0, 0.8);
    // Linear warmup over 4 steps, then cosine decay to a tenth: the lr moves every step.
    for (int step = 0; step < kParitySteps; ++step) {
      const double warmup = std::min(1.0, (step + 1) / 4.0);
      const double pi = std::acos(-1.0);
      const double cosine = 0.55 + 0.45 * std::cos(pi * step / kParitySteps);
      d.lr_factors.push_back(warmup * cosine);
    }
    return d;
  }();
  return data;
}

// The model's parameters, fresh leaf tensors at the initial values.
struct ParityModel {
  at::Tensor weight;
  at::Tensor bias;

  static ParityModel initial() {
    const auto& d = parity_data();
    return {at::tensor(d.weight).reshape({3, 4}).requires_grad_(), at::tensor(d.bias).requires_grad_()};
  }
  // A model holding this one's current values in new tensors, as a resumed run rebuilds it.
  ParityModel copy() const {
    return {weight.detach().clone().requires_grad_(), bias.detach().clone().requires_grad_()};
  }
  // The two groups the host forms: decayed weights with an lr multiplier, biases with neither.
  OptimizerContext context() const {
    return OptimizerContext{{ParameterGroup{"decay", {{"fc.weight", weight}}, kWeightLrScale, kWeightDecay, false},
                             ParameterGroup{"no_decay", {{"fc.bias", bias}}, 1.0, 0.0, true}}};
  }
  // Weight then bias, flattened.
  std::vector<float> values() const {
    const auto flat = at::cat({weight.detach().flatten(), bias.detach()}).contiguous();
    return {flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel()};
  }
};

// Steps [first, last) of the parity run, setting each group's lr first as the trainer does.
inline void train(torch::optim::Optimizer& optimizer, ParityModel& model, double base_lr, int first, int last) {
  const auto& d = parity_data();
  const auto inputs = at::tensor(d.inputs).reshape({8, 4});
  const auto targets = at::tensor(d.targets).reshape({8, 3});
  const double lr_scales[] = {kWeightLrScale, 1.0};
  for (int step = first; step < last; ++step) {
    for (std::size_t g = 0; g < optimizer.param_groups().size(); ++g)
      optimizer.param_groups()[g].options().set_lr(base_lr * d.lr_factors[step] * lr_scales[g]);
    optimizer.zero_grad();
    (at::matmul(inputs, model.weight.t()) + model.bias - targets).pow(2).mean().backward();
    optimizer.step();
  }
}

// The parameters after the whole parity run with the optimizer `create` makes.
inline std::vector<float> train_in_cpp(const OptimizerFactory& create, const Params& params) {
  auto model = ParityModel::initial();
  const auto optimizer = create(params, model.context());
  train(*optimizer, model, params.real("lr"), 0, kParitySteps);
  return model.values();
}

inline std::string python_list(const std::vector<float>& values) {
  std::string out = "[";
  char buffer[32];
  for (float v : values) {
    std::snprintf(buffer, sizeof buffer, "%.9g,", v);
    out += buffer;
  }
  return out + "]";
}

inline std::string python_list(const std::vector<double>& values) {
  std::string out = "[";
  char buffer[40];
  for (double v : values) {
    std::snprintf(buffer, sizeof buffer, "%.17g,", v);
    out += buffer;
  }
  return out + "]";
}

// The parameters after the same run in PyTorch. `definitions` is Python run
// first (a reference optimizer class where PyTorch has none); `optimizer` is
// an expression building the optimizer from `groups`, e.g.
// "torch.optim.Adam(groups, eps=1.0)".
inline std::vector<float> train_in_python(double base_lr, const std::string& optimizer,
                                          const std::string& definitions = "") {
  const auto& d = parity_data();
  std::ostringstream script;
  script << "import torch\n"
         << "torch.set_default_dtype(torch.float32)\n"
         << "def floats(values): return torch.tensor(values, dtype=torch.float32)\n"
         << "weight = floats(" << python_list(d.weight) << ").reshape(3, 4).requires_grad_()\n"
         << "bias = floats(" << python_list(d.bias) << ").requires_grad_()\n"
         << "inputs = floats(" << python_list(d.inputs) << ").reshape(8, 4)\n"
         << "targets = floats(" << python_list(d.targets) << ").reshape(8, 3)\n"
         << "factors = " << python_list(d.lr_factors) << "\n"
         << "base_lr = " << python_list(std::vector<double>{base_lr}) << "[0]\n"
         << "lr_scales = " << python_list(std::vector<double>{kWeightLrScale, 1.0}) << "\n"
         << "groups = [{'params': [weight], 'lr': base_lr * lr_scales[0], 'weight_decay': "
         << python_list(std::vector<double>{kWeightDecay}) << "[0]},\n"
         << "          {'params': [bias], 'lr': base_lr * lr_scales[1], 'weight_decay': 0.0}]\n"
         << definitions << "\n"
         << "optimizer = " << optimizer << "\n"
         << "for step in range(" << kParitySteps << "):\n"
         << "    for group, scale in zip(optimizer.param_groups, lr_scales):\n"
         << "        group['lr'] = base_lr * factors[step] * scale\n"
         << "    optimizer.zero_grad()\n"
         << "    ((inputs @ weight.t() + bias - targets) ** 2).mean().backward()\n"
         << "    optimizer.step()\n"
         << "print(' '.join('%.9g' % v for v in torch.cat([weight.detach().flatten(), bias.detach()]).tolist()))\n";
  std::istringstream printed(testing::run_python(script.str()));
  std::vector<float> out;
  for (std::string word; printed >> word;) out.push_back(std::strtof(word.c_str(), nullptr));
  return out;
}

// Equal within kParityTolerance relative to each expected value (with a floor
// of 1e-7 absolute, float32's resolution around 1, for values near zero),
// and the run must have moved the parameters, so a no-op cannot pass.
inline void expect_parity(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  ParityModel initial = ParityModel::initial();
  const auto start = initial.values();
  double moved = 0, worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double tolerance = kParityTolerance * std::abs(expected[i]) + 1e-7;
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "parameter element " << i;
    moved = std::max(moved, std::abs(double(expected[i]) - start[i]));
    worst = std::max(worst, std::abs(double(actual[i]) - expected[i]) / tolerance);
  }
  // How much of the tolerance the worst element used, in the test's XML report.
  ::testing::Test::RecordProperty("worst_error_over_tolerance", std::to_string(worst));
  EXPECT_GT(moved, 1e-3) << "the reference run barely moved the parameters; the comparison would prove little";
}

}  // namespace orchestrate::optimizer_testing

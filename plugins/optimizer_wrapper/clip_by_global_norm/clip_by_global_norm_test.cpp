#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../common/wrapper_test_support.h"
#include "orchestrate/error.h"
#include "orchestrate/optimizer_wrapper.h"
#include "orchestrate/testing/python_reference.h"

namespace {

using namespace orchestrate::testing;
using orchestrate::WrapperContext;

// Gradients in two groups (the norm is global across them) and one parameter
// without a gradient, which clipping must skip.
struct Model {
  at::ScalarType dtype;
  at::Tensor kernel, dense, frozen, bias;

  explicit Model(at::ScalarType type) : dtype(type) {
    kernel = at::zeros({2, 3}, dtype).requires_grad_();
    dense = at::zeros({4}, dtype).requires_grad_();
    frozen = at::zeros({2}, dtype).requires_grad_();
    bias = at::zeros({3}, dtype).requires_grad_();
  }
  WrapperContext context() const {
    WrapperContext out;
    out.groups.push_back(parameter_group("decay", {kernel, dense, frozen}, 1e-4, false));
    out.groups.push_back(parameter_group("no_decay", {bias}, 0.0, true));
    out.base_lr = 0.1;
    return out;
  }
  // Gradients of global norm about `scale` * 3.
  void set_gradients(double scale) {
    kernel.mutable_grad() = (at::arange(6, at::kDouble).reshape({2, 3}).sin() * scale).to(dtype);
    dense.mutable_grad() = (at::arange(4, at::kDouble).cos() * -scale).to(dtype);
    bias.mutable_grad() = (at::tensor({0.5, -0.25, 2.0}, at::kDouble) * scale).to(dtype);
  }
  std::vector<at::Tensor> gradients() const { return {kernel.grad(), dense.grad(), bias.grad()}; }
};

std::string python_literal(const at::Tensor& tensor) {
  const auto values = tensor.to(at::kDouble).contiguous();
  std::ostringstream out;
  out << "torch.tensor([";
  char number[32];
  for (std::int64_t i = 0; i < values.numel(); ++i) {
    std::snprintf(number, sizeof number, "%.17g", values.data_ptr<double>()[i]);
    out << (i ? ", " : "") << number;
  }
  out << "], dtype=torch.float64).to(" << (tensor.scalar_type() == at::kFloat ? "torch.float32" : "torch.float64")
      << ")";
  return out.str();
}

const char* python_dtype(const at::Tensor& tensor) {
  return tensor.scalar_type() == at::kFloat ? "torch.float32" : "torch.float64";
}

// A Python statement printing, on one line, what torch.nn.utils.clip_grad_norm_
// returns for these gradients, then every clipped gradient value, flattened.
std::string torch_clip_grad_norm_case(const std::vector<at::Tensor>& gradients, double max_norm) {
  std::ostringstream script;
  script << "params = []\n";
  for (const auto& gradient : gradients)
    script << "p = torch.nn.Parameter(torch.zeros(" << gradient.numel() << ", dtype=" << python_dtype(gradient)
           << "))\n"
           << "p.grad = " << python_literal(gradient.flatten()) << "\n"
           << "params.append(p)\n";
  script << "norm = torch.nn.utils.clip_grad_norm_(params, max_norm=" << max_norm << ", norm_type=2.0)\n"
         << "values = [norm.item()] + [v for p in params for v in p.grad.double().tolist()]\n"
         << "print(' '.join(repr(float(v)) for v in values))\n";
  return script.str();
}

struct ParityCase {
  at::ScalarType dtype;
  double scale;     // of the gradients, whose global norm is about 3 * scale
  double max_norm;
};

const std::vector<ParityCase> kParityCases = {
    {at::kDouble, 10.0, 5.0},  // clipped
    {at::kDouble, 0.1, 5.0},   // left as it is
    {at::kFloat, 10.0, 1.0},   // float32, as most gradients are
};

// torch's answers to every case, from one Python run.
const std::vector<std::vector<double>>& torch_answers() {
  static const auto answers = [] {
    std::string script = "import torch\n";
    for (const auto& parity_case : kParityCases) {
      Model model(parity_case.dtype);
      model.set_gradients(parity_case.scale);
      script += torch_clip_grad_norm_case(model.gradients(), parity_case.max_norm);
    }
    std::istringstream printed(run_python(script));
    std::vector<std::vector<double>> out;
    for (std::string line; std::getline(printed, line);) {
      std::istringstream numbers(line);
      out.emplace_back();
      for (double value; numbers >> value;) out.back().push_back(value);
    }
    return out;
  }();
  return answers;
}

// Our norm, then our clipped gradients, flattened like torch_clip_grad_norm.
std::vector<double> clip_with_wrapper(Model& model, double max_norm) {
  const auto context = model.context();
  auto optimizer = base_optimizer_without_decay<torch::optim::SGD>(context, torch::optim::SGDOptions(0.1));
  orchestrate::Params params;  // max_norm is the only key, and has no default
  params.set("max_norm", max_norm);
  auto clip = make_wrapper("clip_by_global_norm", params, context);
  std::map<std::string, at::Tensor> metrics;
  orchestrate::UpdateView view{*optimizer, metrics, 0};
  clip->before_step(view);
  const auto& norm = metrics.at("train/grad_norm");
  EXPECT_EQ(norm.dim(), 0);
  EXPECT_FALSE(norm.requires_grad());
  std::vector<double> out{norm.item<double>()};
  for (const auto& gradient : model.gradients()) {
    const auto values = gradient.to(at::kDouble).contiguous();
    out.insert(out.end(), values.data_ptr<double>(), values.data_ptr<double>() + values.numel());
  }
  return out;
}

// One test for all cases: ctest runs each test in its own process, and each
// Python start with torch costs seconds.
TEST(ClipByGlobalNorm, MatchesTorchClipGradNorm) {
  ASSERT_EQ(torch_answers().size(), kParityCases.size());
  for (std::size_t index = 0; index < kParityCases.size(); ++index) {
    const auto& parity_case = kParityCases[index];
    SCOPED_TRACE("case " + std::to_string(index) + ": " + (parity_case.dtype == at::kFloat ? "float32" : "float64") +
                 ", gradient scale " + std::to_string(parity_case.scale) + ", max_norm " +
                 std::to_string(parity_case.max_norm));
    const auto& expected = torch_answers()[index];
    const double tolerance = parity_case.dtype == at::kFloat ? 1e-6 : 1e-15;
    Model model(parity_case.dtype);
    model.set_gradients(parity_case.scale);
    const auto actual = clip_with_wrapper(model, parity_case.max_norm);
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i)
      EXPECT_NEAR(actual[i], expected[i], tolerance * std::max(1.0, std::abs(expected[i])))
          << (i == 0 ? "the norm" : "gradient value " + std::to_string(i - 1));
    EXPECT_FALSE(model.frozen.grad().defined());
  }
}

// Independent of Python: after clipping, the global norm is max_norm.
TEST(ClipByGlobalNorm, ClippedGradientsHaveTheMaxNorm) {
  Model model(at::kDouble);
  model.set_gradients(10.0);
  const auto norm_before = clip_with_wrapper(model, 2.0)[0];
  double squares = 0;
  for (const auto& gradient : model.gradients()) squares += gradient.pow(2).sum().item<double>();
  EXPECT_GT(norm_before, 10.0);
  EXPECT_NEAR(std::sqrt(squares), 2.0 * norm_before / (norm_before + 1e-6), 1e-12);
}

TEST(ClipByGlobalNorm, MaxNormIsRequiredAndPositive) {
  const auto& entry = plugin_under_test().optimizer_wrappers().get("clip_by_global_norm");
  const auto* max_norm = entry.info.schema.find("max_norm");
  ASSERT_NE(max_norm, nullptr);
  EXPECT_TRUE(max_norm->required());
  EXPECT_EQ(max_norm->check(0.0), "must be > 0");
  EXPECT_THROW(orchestrate::default_params(entry.info.schema), orchestrate::Error);
  EXPECT_FALSE(entry.meta.must_come_first);
  EXPECT_FALSE(entry.meta.must_come_last);
  EXPECT_TRUE(entry.meta.exclusive_group.empty());
  EXPECT_FALSE(entry.meta.takes_over_weight_decay);
  EXPECT_FALSE(entry.meta.micro_batches);
}

}  // namespace

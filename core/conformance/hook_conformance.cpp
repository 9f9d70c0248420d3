// The hook contract.
// Part of share/doc/design.md's promise that each kind has a conformance test
// every plugin of that kind passes; run on the components conformance_plugins.h
// selected (`orchestrate conformance`).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "orchestrate/hook.h"
#include "orchestrate/model.h"

#include "conformance/conformance_plugins.h"

namespace {

using orchestrate::ComponentKind;
using namespace orchestrate::conformance;  // registry(), selected_names(), params_for(), ...

class HookConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HookConformance);

// A model with weights and batch-norm buffers, for hooks to look at.
class SmallNet final : public orchestrate::Model {
 public:
  SmallNet() {
    conv_ = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3)));
    norm_ = register_module("norm", torch::nn::BatchNorm2d(4));
    fc_ = register_module("fc", torch::nn::Linear(4 * 6 * 6, 3));
  }
  at::Tensor forward(const at::Tensor& images) override {
    return fc_->forward(norm_->forward(conv_->forward(images)).relu().flatten(1));
  }

 private:
  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d norm_{nullptr};
  torch::nn::Linear fc_{nullptr};
};

// Records what a hook sends; stops are kept with the step they came at.
class RecordingSink final : public orchestrate::HookSink {
 public:
  std::int64_t step = 0;
  std::map<std::string, double> metrics;
  std::vector<std::int64_t> stops;
  void metric(const std::string& name, double value) override { metrics[name] = value; }
  void event(const std::string& kind, const std::string& message) override {
    EXPECT_FALSE(kind.empty());
    EXPECT_FALSE(message.empty());
  }
  void print(const std::string&) override {}
  void request_stop(const std::string& reason) override {
    EXPECT_FALSE(reason.empty()) << "a stop says why";
    stops.push_back(step);
  }
};

std::vector<at::Tensor> state_copy(orchestrate::Model& model) {
  std::vector<at::Tensor> out;
  for (const auto& p : model.parameters()) out.push_back(p.detach().clone());
  for (const auto& b : model.buffers()) out.push_back(b.detach().clone());
  return out;
}

// hook.h's contract, over a whole run of 12 updates on two ranks: the model
// is left exactly as it was (weights, buffers, train mode), and a stop is
// asked for at the same update on every rank.
TEST_P(HookConformance, LeavesTheModelAloneAndStopsAlikeOnEveryRank) {
  const auto& entry = registry().hooks().get(GetParam());
  const auto params = params_for(ComponentKind::hook, GetParam());
  const auto scratch = std::filesystem::path(testing::TempDir()) / ("hook-" + GetParam());
  std::filesystem::remove_all(scratch);
  SmallNet model;
  model.train();
  const auto before = state_copy(model);
  std::vector<std::vector<std::int64_t>> stops;
  for (int rank = 0; rank < 2; ++rank) {
    orchestrate::HookContext context{rank, 2, (scratch / "artifacts").string(), 1};
    auto hook = entry.create(params, context);
    ASSERT_TRUE(hook) << "the factory returned no hook";
    RecordingSink sink;
    hook->on_train_begin(orchestrate::TrainBegin{model, {1, 8, 8, 3}, 4, 0, 12, 6, c10::Device(c10::kCPU)}, sink);
    for (std::int64_t step = 1; step <= 12; ++step) {
      hook->before_update(step);
      at::matmul(at::rand({32, 32}), at::rand({32, 32}));  // the update's work, as a profiler would see it
      sink.step = step;
      const orchestrate::StepView view{step, 12, 1 + (step - 1) / 6, 0.1, at::scalar_tensor(2.5 - 0.1 * step), 8, 0.01,
                                       0.001};
      hook->after_update(view, sink);
    }
    hook->on_train_end(orchestrate::TrainEnd{12, orchestrate::TrainEndReason::finished}, sink);
    stops.push_back(sink.stops);
    for (const auto& [name, value] : sink.metrics) {
      EXPECT_FALSE(name.empty());
      EXPECT_TRUE(std::isfinite(value)) << name;
    }
  }
  EXPECT_EQ(stops[0], stops[1]) << "a stop must come at the same update on every rank";
  EXPECT_TRUE(model.is_training()) << "the hook left the model in eval mode";
  const auto after = state_copy(model);
  ASSERT_EQ(before.size(), after.size());
  for (std::size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(before[i].equal(after[i])) << "tensor " << i << " changed";
  std::filesystem::remove_all(scratch);
}

INSTANTIATE_TEST_SUITE_P(All, HookConformance, testing::ValuesIn(selected_names(ComponentKind::hook)),
                         name_of_param);

}  // namespace

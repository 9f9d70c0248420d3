// The update step alone: the base optimizer steps at the schedule's learning
// rate times the group's scale, gradients are cleared after, and an update
// whose loss is not finite is skipped, counted, recorded, and kept across a
// resume (its state). An optimizer that skips on the device is handed the
// check instead, and the same updates are skipped and recorded, later.
#include "engine/train/update_step.h"

#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <ATen/ATen.h>

#include <limits>
#include <optional>

#include "store/run_store_test_support.h"

namespace orchestrate {
namespace {

// Plain SGD on ATen's fused kernel, which takes the skip flag; the host
// either hands it the flag (SkipsOnDevice) or reads the check itself.
class KernelSgd : public torch::optim::SGD {
 public:
  explicit KernelSgd(at::Tensor weight) : torch::optim::SGD({std::move(weight)}, torch::optim::SGDOptions(1.0)) {}
  torch::Tensor step(LossClosure = nullptr) override {
    at::NoGradGuard no_grad;
    auto& group = param_groups()[0];
    const auto& param = group.params()[0];
    at::_fused_sgd_({param}, {param.grad()}, {}, 0.0, 0.0, group.options().get_lr(), 0.0, false, false, false,
                    std::nullopt, std::exchange(found_inf_, std::nullopt));
    return {};
  }

 protected:
  std::optional<at::Tensor> found_inf_;
};

class DeviceSkippingSgd final : public KernelSgd, public SkipsOnDevice {
 public:
  using KernelSgd::KernelSgd;
  void skip_next_step_if(const at::Tensor& found_inf) override { found_inf_ = found_inf; }
};


// One weight of 4 in a group with `lr_scale`, under plain SGD, and the
// stage-2 and precision parts the step is handed (both off).
struct Step {
  testing::ScratchRun run;
  Settings settings{};
  TrainingComponents components;
  at::Tensor weight = at::ones({4}).requires_grad_();
  PrecisionPolicy precision{PrecisionMode::fp32, LossScalerSettings{}, c10::kCPU};
  std::unique_ptr<DimReduceStage> stage2;
  std::unique_ptr<UpdateStep> step;

  explicit Step(double lr_scale) {
    components.groups = {ParameterGroup{"all", {NamedParameter{"w", weight}}, lr_scale}};
    components.optimizer = std::make_unique<torch::optim::SGD>(std::vector<at::Tensor>{weight},
                                                               torch::optim::SGDOptions(1.0));
    stage2 = std::make_unique<DimReduceStage>(settings, components, run.recorder, nullptr,
                                              run.dir.file("artifacts"), [](const std::string&) {});
    step = std::make_unique<UpdateStep>(components, NonFinitePolicy::skip, run.recorder);
  }
  // Gradient 2 everywhere (loss 2 * sum(w)), then the update at `lr`.
  void update(double loss_value, double lr) {
    (weight.sum() * 2).backward();
    step->apply(at::scalar_tensor(loss_value), lr, /*update=*/0, /*epoch=*/0, precision, *stage2,
                [](const at::Tensor&, const at::Tensor&) { return at::Tensor(); });
  }
};

TEST(UpdateStep, TheOptimizerStepsAtTheScheduledRateTimesTheGroupsScale) {
  Step s(/*lr_scale=*/0.5);
  s.update(/*loss=*/1.0, /*lr=*/0.1);
  EXPECT_TRUE(at::allclose(s.weight.detach(), at::full({4}, 1.0 - 0.1 * 0.5 * 2.0)));
  EXPECT_FALSE(s.weight.grad().defined() && s.weight.grad().abs().sum().item<double>() != 0)
      << "the gradients are cleared for the next update";
  EXPECT_EQ(s.step->skipped(), 0);
}

TEST(UpdateStep, ANonFiniteLossIsSkippedCountedRecordedAndKeptAcrossAResume) {
  Step s(/*lr_scale=*/1.0);
  s.update(std::numeric_limits<double>::quiet_NaN(), 0.1);
  EXPECT_TRUE(s.weight.detach().equal(at::ones({4}))) << "a skipped update leaves the weights";
  EXPECT_EQ(s.step->skipped(), 1);
  s.run.store.flush();
  const auto events = s.run.store.events(s.run.id);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, "skipped_update");
  EXPECT_NE(events.back().message.find("update 1 (epoch 1) skipped: loss is not finite"), std::string::npos)
      << events.back().message;

  Step resumed(/*lr_scale=*/1.0);
  resumed.step->load_state_dict(s.step->state_dict());
  EXPECT_EQ(resumed.step->skipped(), 1);
}

// One weight of 4 under `optimizer`, with dynamic fp16 loss scaling from
// 1024 (or fp32 without it), on the CPU.
struct CheckedStep {
  testing::ScratchRun run;
  Settings settings{};
  TrainingComponents components;
  at::Tensor weight = at::ones({4}).requires_grad_();
  PrecisionPolicy precision;
  std::unique_ptr<DimReduceStage> stage2;
  std::unique_ptr<UpdateStep> step;

  static LossScalerSettings dynamic_from_1024() {
    LossScalerSettings s;
    s.mode = LossScaleMode::dynamic;
    s.scale = 1024;
    return s;
  }
  CheckedStep(bool skips_on_device, PrecisionMode mode, NonFinitePolicy on_nonfinite)
      : precision(mode, mode == PrecisionMode::fp16 ? dynamic_from_1024() : LossScalerSettings{}, c10::kCPU) {
    components.groups = {ParameterGroup{"all", {NamedParameter{"w", weight}}}};
    if (skips_on_device)
      components.optimizer = std::make_unique<DeviceSkippingSgd>(weight);
    else
      components.optimizer = std::make_unique<KernelSgd>(weight);
    stage2 = std::make_unique<DimReduceStage>(settings, components, run.recorder, nullptr, run.dir.file("artifacts"),
                                              [](const std::string&) {});
    step = std::make_unique<UpdateStep>(components, on_nonfinite, run.recorder);
  }
  // Update `index` of gradient 2 everywhere, scaled; `overflow` makes the
  // gradients inf, as an fp16 backward that overflowed does.
  void update(std::int64_t index, bool overflow, double loss = 1.0) {
    precision.scale(weight.sum() * 2).backward();
    if (overflow) weight.mutable_grad().fill_(std::numeric_limits<float>::infinity());
    step->apply(at::scalar_tensor(loss, at::kFloat), 0.1, index, /*epoch=*/0, precision, *stage2,
                [](const at::Tensor&, const at::Tensor&) { return at::Tensor(); });
  }
  std::vector<std::string> messages(const std::string& kind) {
    std::vector<std::string> out;
    for (const auto& event : run.events_of(kind)) out.push_back(event.message);
    return out;
  }
};

TEST(UpdateStep, AnOptimizerThatSkipsOnTheDeviceSkipsTheSameUpdatesAndRecordsThemWhenRead) {
  CheckedStep host(/*skips_on_device=*/false, PrecisionMode::fp16, NonFinitePolicy::stop);
  CheckedStep device(/*skips_on_device=*/true, PrecisionMode::fp16, NonFinitePolicy::stop);
  const bool overflows[] = {false, true, false, true, true, false};
  for (std::int64_t i = 0; i < 6; ++i) {
    host.update(i, overflows[i]);
    device.update(i, overflows[i]);
  }
  EXPECT_EQ(host.messages("skipped_update").size(), 3u) << "the host records each skip as it reads it";
  EXPECT_TRUE(device.messages("skipped_update").empty()) << "no check was read yet";

  EXPECT_TRUE(device.weight.equal(host.weight)) << device.weight << host.weight;
  EXPECT_TRUE(at::allclose(device.weight, at::full({4}, 1.0 - 3 * 0.1 * 2.0))) << "three updates stepped";
  EXPECT_EQ(device.step->skipped(), 3);
  EXPECT_EQ(device.messages("skipped_update"), host.messages("skipped_update"));
  EXPECT_EQ(device.messages("skipped_update").at(1), "update 4 (epoch 1) skipped: inf/nan gradients at loss scale "
                                                     "512.000000");
  EXPECT_EQ(device.precision.scaler().scale_value(), host.precision.scaler().scale_value());

  ASSERT_EQ(device.messages("skip_check").size(), 1u);
  EXPECT_NE(device.messages("skip_check")[0].find("skipped on the device"), std::string::npos);
  ASSERT_EQ(host.messages("skip_check").size(), 1u);
  EXPECT_NE(host.messages("skip_check")[0].find("waits for the host"), std::string::npos);
}

TEST(UpdateStep, ANonFiniteLossIsSkippedOnTheDeviceAndTheCheckpointCountsIt) {
  CheckedStep s(/*skips_on_device=*/true, PrecisionMode::fp32, NonFinitePolicy::skip);
  s.update(0, /*overflow=*/false, std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(s.weight.detach().equal(at::ones({4}))) << "the skipped update left the weights";
  s.update(1, /*overflow=*/false);
  EXPECT_TRUE(s.weight.detach().equal(at::full({4}, 0.8)));
  const auto state = s.step->state_dict();
  EXPECT_EQ(state.at("skipped_updates").item<std::int64_t>(), 1) << "saving reads the checks";
  EXPECT_EQ(s.messages("skipped_update"), std::vector<std::string>{"update 1 (epoch 1) skipped: loss is not finite"});
}

}  // namespace
}  // namespace orchestrate

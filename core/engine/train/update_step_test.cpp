// The update step alone: the base optimizer steps at the schedule's learning
// rate times the group's scale, gradients are cleared after, and an update
// whose loss is not finite is skipped, counted, recorded, and kept across a
// resume (its state).
#include "engine/train/update_step.h"

#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <ATen/ATen.h>

#include <limits>

#include "store/run_store_test_support.h"

namespace orchestrate {
namespace {

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

}  // namespace
}  // namespace orchestrate

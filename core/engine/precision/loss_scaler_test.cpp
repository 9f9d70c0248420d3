#include "engine/precision/loss_scaler.h"

#include <gtest/gtest.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "orchestrate/error.h"
#include "orchestrate/testing/python_reference.h"

namespace orchestrate {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

LossScalerSettings dynamic_settings(std::int64_t growth_interval = 2000) {
  LossScalerSettings s;
  s.mode = LossScaleMode::dynamic;
  s.growth_interval = growth_interval;
  return s;
}

LossScalerSettings static_settings(double loss_scale = 1024.0) {
  LossScalerSettings s;
  s.mode = LossScaleMode::fixed;
  s.scale = loss_scale;
  return s;
}

// One training step on a 3-element parameter whose gradient is the scale,
// with `bad` (inf or nan) written into it when given. Returns whether the
// scaler reported non-finite gradients.
bool step(LossScaler& scaler, torch::Tensor& param, std::optional<double> bad = std::nullopt) {
  param.mutable_grad() = torch::Tensor();
  scaler.scale(param.sum()).backward();
  if (bad) param.mutable_grad().select(0, 1).fill_(*bad);
  const auto found_inf = scaler.unscale_({param.grad()});
  const bool skipped = LossScaler::found_inf_value(found_inf);
  scaler.update(found_inf);
  return skipped;
}

torch::Tensor parameter() { return torch::ones({3}).requires_grad_(true); }

TEST(LossScaler, ScaleMultipliesTheLossWithoutChangingItsDtype) {
  LossScaler scaler(static_settings(1024));
  const auto scaled = scaler.scale(torch::tensor(0.5));
  EXPECT_EQ(scaled.scalar_type(), torch::kFloat);
  EXPECT_DOUBLE_EQ(scaled.item<double>(), 512.0);
}

TEST(LossScaler, UnscaleDividesGradientsInPlaceAndSkipsUndefinedOnes) {
  LossScaler scaler(static_settings(1024));
  scaler.scale(torch::tensor(1.0));
  auto fp32 = torch::full({4}, 2048.0);
  auto bf16 = torch::full({2}, 1024.0, torch::kBFloat16);
  const auto found_inf = scaler.unscale_({fp32, torch::Tensor(), bf16});
  EXPECT_FALSE(LossScaler::found_inf_value(found_inf));
  EXPECT_TRUE(torch::equal(fp32, torch::full({4}, 2.0)));
  EXPECT_TRUE(torch::equal(bf16, torch::full({2}, 1.0, torch::kBFloat16)));
  EXPECT_EQ(found_inf.dim(), 0);
  EXPECT_EQ(found_inf.scalar_type(), torch::kFloat);
}

TEST(LossScaler, InfGradientIsFoundSkippedAndBacksOffTheScale) {
  LossScaler scaler(dynamic_settings());
  auto param = parameter();
  EXPECT_TRUE(step(scaler, param, kInf));
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 32768.0);
  EXPECT_EQ(scaler.skipped_updates(), 1);
}

TEST(LossScaler, NanGradientIsFoundSkippedAndBacksOffTheScale) {
  LossScaler scaler(dynamic_settings());
  auto param = parameter();
  EXPECT_TRUE(step(scaler, param, kNan));
  EXPECT_TRUE(step(scaler, param, -kInf));
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 16384.0);
  EXPECT_EQ(scaler.skipped_updates(), 2);
}

TEST(LossScaler, GrowsAfterGrowthIntervalCleanSteps) {
  LossScaler scaler(dynamic_settings(/*growth_interval=*/3));
  auto param = parameter();
  EXPECT_FALSE(step(scaler, param));
  EXPECT_FALSE(step(scaler, param));
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 65536.0);
  EXPECT_FALSE(step(scaler, param));
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 131072.0);
  EXPECT_TRUE(torch::allclose(param.grad(), torch::ones({3})));
  EXPECT_EQ(scaler.skipped_updates(), 0);
}

TEST(LossScaler, AnInfRestartsTheCountTowardsGrowth) {
  LossScaler scaler(dynamic_settings(/*growth_interval=*/2));
  auto param = parameter();
  step(scaler, param);
  step(scaler, param, kInf);  // backoff to 32768, tracker reset
  step(scaler, param);
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 32768.0);
  step(scaler, param);
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 65536.0);
}

TEST(LossScaler, StaticModeNeverChangesTheScaleButStillSkipsAndCounts) {
  LossScaler scaler(static_settings(1024));
  auto param = parameter();
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(step(scaler, param));
  EXPECT_TRUE(step(scaler, param, kInf));
  EXPECT_TRUE(step(scaler, param, kNan));
  EXPECT_DOUBLE_EQ(scaler.scale_value(), 1024.0);
  EXPECT_EQ(scaler.skipped_updates(), 2);
}

TEST(LossScaler, OffModeLeavesLossAndGradientsAlone) {
  LossScaler scaler(LossScalerSettings{});
  EXPECT_FALSE(scaler.enabled());
  const auto loss = torch::tensor(3.0);
  EXPECT_TRUE(scaler.scale(loss).is_same(loss));
  auto grad = torch::full({2}, kInf);
  const auto found_inf = scaler.unscale_({grad});
  EXPECT_FALSE(LossScaler::found_inf_value(found_inf));
  EXPECT_TRUE(std::isinf(grad[0].item<double>()));
  scaler.update(found_inf);
  EXPECT_EQ(scaler.skipped_updates(), 0);
}

TEST(LossScaler, RefusesFloat16Gradients) {
  LossScaler scaler(dynamic_settings());
  scaler.scale(torch::tensor(1.0));
  try {
    scaler.unscale_({torch::ones({2}), torch::ones({2}, torch::kHalf)});
    FAIL() << "fp16 gradient accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gradient 1 is float16"), std::string::npos) << e.what();
  }
}

TEST(LossScaler, BadSettingsAndModeNamesAreErrors) {
  auto s = dynamic_settings();
  s.backoff_factor = 1.5;
  EXPECT_THROW(LossScaler{s}, Error);
  s = dynamic_settings(0);
  EXPECT_THROW(LossScaler{s}, Error);
  EXPECT_THROW(LossScaler{static_settings(0)}, Error);
  EXPECT_EQ(parse_loss_scale_mode("static"), LossScaleMode::fixed);
  EXPECT_STREQ(loss_scale_mode_name(LossScaleMode::fixed), "static");
  EXPECT_THROW(parse_loss_scale_mode("auto"), Error);
}

// Saves through an archive and its bytes, as a checkpoint does.
void save_and_load(const LossScaler& from, LossScaler& to) {
  torch::serialize::OutputArchive out;
  for (const auto& [key, tensor] : from.state_dict()) out.write(key, tensor);
  std::stringstream bytes;
  out.save_to(bytes);
  torch::serialize::InputArchive in;
  in.load_from(bytes);
  StateDict state;
  for (const auto& key : in.keys()) in.read(key, state[key]);
  to.load_state_dict(state);
}

TEST(LossScaler, SaveAndLoadResumesTheExactTrajectory) {
  LossScaler original(dynamic_settings(/*growth_interval=*/3));
  auto param = parameter();
  step(original, param);
  step(original, param, kInf);
  step(original, param);
  step(original, param);  // growth tracker at 2: the next clean step grows

  LossScaler resumed(dynamic_settings(/*growth_interval=*/3));
  save_and_load(original, resumed);
  EXPECT_EQ(resumed.scale_value(), original.scale_value());
  EXPECT_EQ(resumed.skipped_updates(), 1);
  auto param2 = parameter();
  for (int i = 0; i < 4; ++i) {
    const bool bad = i == 2;
    step(original, param, bad ? std::optional(kInf) : std::nullopt);
    step(resumed, param2, bad ? std::optional(kInf) : std::nullopt);
    EXPECT_EQ(resumed.scale_value(), original.scale_value()) << "after resumed step " << i;
  }
  EXPECT_EQ(resumed.skipped_updates(), 2);
}

TEST(LossScaler, LoadingACheckpointWithoutScalerStateIsAnError) {
  const StateDict other{{"something_else", torch::zeros({})}};
  LossScaler scaler(dynamic_settings());
  EXPECT_THROW(scaler.load_state_dict(other), Error);
}

// The same 30 events through torch.amp.GradScaler and through LossScaler give
// the same scale and the same skip decision after every update.
TEST(LossScaler, MatchesTorchGradScalerStepForStep) {
  const std::set<int> inf_steps{4, 5, 11, 17, 18, 19, 26};
  const std::set<int> nan_steps{8, 23};
  const auto as_python_set = [](const std::set<int>& steps) {
    std::string text = "{";
    for (int s : steps) text += std::to_string(s) + ",";
    return text + "}";
  };
  const std::string script = R"(
import torch
inf_steps, nan_steps = )" + as_python_set(inf_steps) + ", " + as_python_set(nan_steps) + R"(
p = torch.nn.Parameter(torch.ones(3))
opt = torch.optim.SGD([p], lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=3)
for step in range(30):
    opt.zero_grad()
    scaler.scale(p.sum()).backward()
    if step in inf_steps: p.grad[1] = float("inf")
    if step in nan_steps: p.grad[1] = float("nan")
    before = p.detach().clone()
    scaler.step(opt)
    skipped = int(torch.equal(before, p.detach()))
    scaler.update()
    print(repr(scaler.get_scale()), skipped)
)";
  std::istringstream reference(testing::run_python(script));

  LossScaler scaler(dynamic_settings(/*growth_interval=*/3));
  auto param = parameter();
  int skipped_total = 0;
  for (int i = 0; i < 30; ++i) {
    std::optional<double> bad;
    if (inf_steps.count(i)) bad = kInf;
    if (nan_steps.count(i)) bad = kNan;
    const bool skipped = step(scaler, param, bad);
    skipped_total += skipped;
    double torch_scale = 0;
    int torch_skipped = -1;
    ASSERT_TRUE(reference >> torch_scale >> torch_skipped) << "reference output ended at step " << i;
    EXPECT_EQ(scaler.scale_value(), torch_scale) << "step " << i;
    EXPECT_EQ(static_cast<int>(skipped), torch_skipped) << "step " << i;
  }
  EXPECT_EQ(scaler.skipped_updates(), skipped_total);
  EXPECT_EQ(skipped_total, static_cast<int>(inf_steps.size() + nan_steps.size()));
}

}  // namespace
}  // namespace orchestrate

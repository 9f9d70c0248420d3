// The precision part alone, with dynamic fp16 loss scaling on the CPU:
// gradients come back divided by the scale, inf gradients give the reason to
// skip the update and halve the scale (GradScaler's backoff), and the scale
// and skipped count are logged only when scaling is on.
#include "engine/train/precision_policy.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <limits>

namespace orchestrate {
namespace {

LossScalerSettings dynamic_scaling() {
  LossScalerSettings s;
  s.mode = LossScaleMode::dynamic;
  s.scale = 1024;
  return s;
}

double metric(const MetricValues& metrics, const std::string& name) {
  for (const auto& [key, value] : metrics)
    if (key == name) return value;
  return -1;
}

TEST(PrecisionPolicy, UnscaledGradientsAreTheTrueOnesAndInfSkipsTheUpdateAndBacksOff) {
  PrecisionPolicy policy(PrecisionMode::fp16, dynamic_scaling(), c10::kCPU);
  auto w = at::ones({3}).requires_grad_();
  policy.scale((w * 2).sum()).backward();
  EXPECT_TRUE(w.grad().equal(at::full({3}, 2048.0))) << "backward ran on the scaled loss";
  EXPECT_EQ(policy.skip_reason(policy.unscale({w})), "");
  EXPECT_TRUE(w.grad().equal(at::full({3}, 2.0)));
  policy.end_update();
  EXPECT_EQ(policy.scaler().scale_value(), 1024.0);

  w.mutable_grad() = at::full({3}, std::numeric_limits<float>::infinity());
  EXPECT_EQ(policy.skip_reason(policy.unscale({w})), "inf/nan gradients at loss scale 1024.000000");
  policy.end_update();
  EXPECT_EQ(policy.scaler().scale_value(), 512.0) << "backoff 0.5";
  MetricValues metrics;
  policy.add_metrics(metrics, /*skipped_updates=*/1);
  EXPECT_EQ(metric(metrics, "train/loss_scale"), 512.0);
  EXPECT_EQ(metric(metrics, "train/skipped_updates"), 1.0);
}

TEST(PrecisionPolicy, WithoutScalingNothingIsUnscaledNorLogged) {
  PrecisionPolicy policy(PrecisionMode::fp32, LossScalerSettings{}, c10::kCPU);
  auto w = at::ones({2}).requires_grad_();
  policy.scale(w.sum()).backward();
  EXPECT_TRUE(w.grad().equal(at::ones({2})));
  w.mutable_grad() = at::full({2}, std::numeric_limits<float>::infinity());
  EXPECT_FALSE(policy.unscale({w}).defined()) << "without a scaler the loss decides (on_nonfinite)";
  MetricValues metrics;
  policy.add_metrics(metrics, 0);
  EXPECT_TRUE(metrics.empty());
}

}  // namespace
}  // namespace orchestrate

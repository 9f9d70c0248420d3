#include "engine/precision/autocast_scope.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <stdexcept>

#include "orchestrate/error.h"

namespace orchestrate {
namespace {

constexpr auto kCpu = c10::DeviceType::CPU;

class AutocastScopeTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::manual_seed(0); }
  void TearDown() override { EXPECT_FALSE(at::autocast::is_autocast_enabled(kCpu)) << "a scope leaked autocast"; }

  torch::nn::Linear linear{4, 3};
  torch::nn::Conv2d conv{torch::nn::Conv2dOptions(2, 3, 3)};
  torch::Tensor features = torch::randn({2, 4});
  torch::Tensor image = torch::randn({1, 2, 5, 5});
};

TEST_F(AutocastScopeTest, LinearRunsInBfloat16InsideAndFloat32Outside) {
  {
    AutocastScope autocast(kCpu, PrecisionMode::bf16);
    EXPECT_EQ(linear(features).scalar_type(), torch::kBFloat16);
  }
  EXPECT_EQ(linear(features).scalar_type(), torch::kFloat);
}

TEST_F(AutocastScopeTest, Conv2dRunsInBfloat16InsideAndFloat32Outside) {
  {
    AutocastScope autocast(kCpu, PrecisionMode::bf16);
    EXPECT_EQ(conv(image).scalar_type(), torch::kBFloat16);
  }
  EXPECT_EQ(conv(image).scalar_type(), torch::kFloat);
}

// CPU autocast in LibTorch 2.11 takes float16 too (torch.autocast lists
// bfloat16 and float16 for CPU), so fp16 is allowed on CPU.
TEST_F(AutocastScopeTest, Float16IsSupportedOnCpu) {
  EXPECT_EQ(AutocastScope::unsupported_reason(kCpu, PrecisionMode::fp16), std::nullopt);
  AutocastScope autocast(kCpu, PrecisionMode::fp16);
  EXPECT_EQ(linear(features).scalar_type(), torch::kHalf);
  EXPECT_EQ(conv(image).scalar_type(), torch::kHalf);
}

// torch.autocast itself fails here: its weight-cast cache ignores the dtype.
TEST_F(AutocastScopeTest, NestedScopesOfAnotherDtypeRestoreTheOuterOne) {
  const auto dtype_before = at::autocast::get_autocast_dtype(kCpu);
  {
    AutocastScope outer(kCpu, PrecisionMode::fp16);
    EXPECT_EQ(linear(features).scalar_type(), torch::kHalf);  // caches an fp16 weight
    {
      AutocastScope inner(kCpu, PrecisionMode::bf16);
      EXPECT_EQ(linear(features).scalar_type(), torch::kBFloat16);
    }
    EXPECT_TRUE(at::autocast::is_autocast_enabled(kCpu));
    EXPECT_EQ(at::autocast::get_autocast_dtype(kCpu), torch::kHalf);
    EXPECT_EQ(linear(features).scalar_type(), torch::kHalf);
  }
  EXPECT_FALSE(at::autocast::is_autocast_enabled(kCpu));
  EXPECT_EQ(at::autocast::get_autocast_dtype(kCpu), dtype_before);
}

TEST_F(AutocastScopeTest, NestedScopesOfTheSameDtypeKeepAutocastOnUntilTheOuterExit) {
  {
    AutocastScope outer(kCpu, PrecisionMode::bf16);
    EXPECT_EQ(linear(features).scalar_type(), torch::kBFloat16);
    { AutocastScope inner(kCpu, PrecisionMode::bf16); }
    EXPECT_TRUE(at::autocast::is_autocast_enabled(kCpu));
    EXPECT_EQ(linear(features).scalar_type(), torch::kBFloat16);
  }
  EXPECT_EQ(linear(features).scalar_type(), torch::kFloat);
}

TEST_F(AutocastScopeTest, Fp32ModeChangesNothing) {
  AutocastScope autocast(kCpu, PrecisionMode::fp32);
  EXPECT_FALSE(at::autocast::is_autocast_enabled(kCpu));
  EXPECT_EQ(linear(features).scalar_type(), torch::kFloat);
}

TEST_F(AutocastScopeTest, ScopeIsRestoredWhenTheForwardThrows) {
  try {
    AutocastScope autocast(kCpu, PrecisionMode::bf16);
    throw std::runtime_error("forward failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(at::autocast::is_autocast_enabled(kCpu));
}

// The trainer's shape: forward under autocast, loss after the scope from fp32
// logits, backward to fp32 gradients of the fp32 parameters.
TEST_F(AutocastScopeTest, LossAfterTheScopeIsFloat32AndGradientsStayFloat32) {
  torch::Tensor logits;
  {
    AutocastScope autocast(kCpu, PrecisionMode::bf16);
    logits = linear(features);
  }
  const auto loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat), torch::tensor({0, 2}));
  EXPECT_EQ(loss.scalar_type(), torch::kFloat);
  loss.backward();
  EXPECT_EQ(linear->weight.grad().scalar_type(), torch::kFloat);
}

TEST_F(AutocastScopeTest, UnsupportedCombinationsExplainThemselves) {
  EXPECT_EQ(AutocastScope::unsupported_reason(c10::DeviceType::FPGA, PrecisionMode::fp32), std::nullopt);
  const auto fpga = AutocastScope::unsupported_reason(c10::DeviceType::FPGA, PrecisionMode::bf16);
  ASSERT_TRUE(fpga.has_value());
  EXPECT_NE(fpga->find("bf16 autocast on"), std::string::npos) << *fpga;
  EXPECT_THROW(AutocastScope(c10::DeviceType::FPGA, PrecisionMode::bf16), Error);
  if (!torch::cuda::is_available()) {
    const auto cuda = AutocastScope::unsupported_reason(c10::DeviceType::CUDA, PrecisionMode::fp16);
    ASSERT_TRUE(cuda.has_value());
    EXPECT_NE(cuda->find("needs a CUDA device"), std::string::npos) << *cuda;
  }
}

TEST(PrecisionMode, NamesRoundTripAndUnknownOnesAreErrors) {
  for (auto mode : {PrecisionMode::fp32, PrecisionMode::bf16, PrecisionMode::fp16})
    EXPECT_EQ(parse_precision_mode(precision_mode_name(mode)), mode);
  EXPECT_THROW(parse_precision_mode("fp8"), Error);
  EXPECT_EQ(autocast_dtype(PrecisionMode::fp16), torch::kHalf);
}

}  // namespace
}  // namespace orchestrate

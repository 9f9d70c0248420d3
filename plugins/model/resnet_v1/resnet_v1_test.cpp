#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../common/torchvision_parity.h"
#include "orchestrate/error.h"
#include "orchestrate/model.h"
#include "orchestrate/plugin.h"
#include "orchestrate/testing/plugin_under_test.h"

namespace {

using orchestrate::ModelInput;
using orchestrate::model_testing::expect_torchvision_parity;
using orchestrate::model_testing::parameter_count;

const ModelInput kImageNet{3, 224, 224, 1000};

orchestrate::Params resnet_params(std::int64_t depth, bool zero_init_residual = false) {
  const auto& schema = orchestrate::testing::plugin_under_test().models().get("resnet_v1").info.schema;
  auto params = orchestrate::default_params(schema);
  params.set("depth", depth);
  params.set("zero_init_residual", zero_init_residual);
  return params;
}

std::shared_ptr<orchestrate::Model> make_resnet(const orchestrate::Params& params, const ModelInput& input) {
  return orchestrate::testing::plugin_under_test().models().get("resnet_v1").create(params, input);
}

at::Tensor parameter(orchestrate::Model& model, const std::string& name) {
  const auto parameters = model.named_parameters();
  const auto* found = parameters.find(name);
  return found ? *found : at::Tensor();
}

TEST(ResNetV1, Resnet18MatchesTorchvisionNamesWeightsAndLogits) {
  const auto model = make_resnet(resnet_params(18), {3, 64, 64, 7});
  expect_torchvision_parity(*model, "torchvision.models.resnet18(num_classes=7)", {2, 3, 64, 64});
}

TEST(ResNetV1, Resnet50MatchesTorchvisionNamesWeightsAndLogits) {
  const auto model = make_resnet(resnet_params(50), {3, 64, 64, 7});
  expect_torchvision_parity(*model, "torchvision.models.resnet50(num_classes=7)", {2, 3, 64, 64});
}

// torchvision's documented parameter counts for its ImageNet models.
TEST(ResNetV1, EveryDepthHasTorchvisionsImageNetParameterCount) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> counts{
      {18, 11689512}, {34, 21797672}, {50, 25557032}, {101, 44549160}, {152, 60192808}};
  for (const auto& [depth, count] : counts)
    EXPECT_EQ(parameter_count(*make_resnet(resnet_params(depth), kImageNet)), count) << "depth " << depth;
}

// The stem takes the data's channels, and pooling adapts: 28x28 reaches layer4 as 1x1.
TEST(ResNetV1, FashionMnistSizedInputGivesLogitsPerClass) {
  const auto model = make_resnet(resnet_params(18), {1, 28, 28, 10});
  EXPECT_EQ(parameter(*model, "conv1.weight").sizes(), (std::vector<std::int64_t>{64, 1, 7, 7}));
  model->train();
  const auto logits = model->forward(at::rand({4, 1, 28, 28}));
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{4, 10}));
  EXPECT_TRUE(logits.isfinite().all().item<bool>());
}

TEST(ResNetV1, ConvWeightsAreKaimingNormalFanOut) {
  torch::manual_seed(0);
  const auto model = make_resnet(resnet_params(50), kImageNet);
  // layer3.0.conv2: 256 -> 256, 3x3; fan_out = 256 * 9.
  const auto weight = parameter(*model, "layer3.0.conv2.weight");
  EXPECT_NEAR(weight.std().item<double>(), std::sqrt(2.0 / (256 * 9)), 0.002);
  EXPECT_NEAR(weight.mean().item<double>(), 0.0, 0.001);
  EXPECT_TRUE(parameter(*model, "layer3.0.bn3.weight").eq(1).all().item<bool>());
  EXPECT_TRUE(parameter(*model, "layer3.0.bn3.bias").eq(0).all().item<bool>());
}

TEST(ResNetV1, ZeroInitResidualZeroesTheLastNormOfEveryBlockOnly) {
  const auto bottleneck = make_resnet(resnet_params(50, /*zero_init_residual=*/true), kImageNet);
  for (const auto& item : bottleneck->named_parameters()) {
    if (item.key().find("bn") == std::string::npos || item.key().find(".weight") == std::string::npos) continue;
    const bool last_in_block = item.key().find(".bn3.") != std::string::npos;
    EXPECT_EQ(item.value().eq(0).all().item<bool>(), last_in_block) << item.key();
  }
  const auto basic = make_resnet(resnet_params(18, /*zero_init_residual=*/true), kImageNet);
  EXPECT_TRUE(parameter(*basic, "layer4.1.bn2.weight").eq(0).all().item<bool>());
  EXPECT_TRUE(parameter(*basic, "layer4.1.bn1.weight").eq(1).all().item<bool>());
  EXPECT_FALSE(parameter(*basic, "layer1.0.downsample.1.weight").defined());  // same shape: no projection
  EXPECT_TRUE(parameter(*basic, "layer2.0.downsample.1.weight").eq(1).all().item<bool>());
}

TEST(ResNetV1, UnsupportedDepthIsRejectedBySchemaAndFactory) {
  const auto& schema = orchestrate::testing::plugin_under_test().models().get("resnet_v1").info.schema;
  const auto params = resnet_params(42);
  ASSERT_EQ(schema.broken_rules(params).size(), 1u);
  EXPECT_NE(schema.broken_rules(params)[0].find("use 18, 34, 50, 101 or 152"), std::string::npos);
  EXPECT_THROW(make_resnet(params, kImageNet), orchestrate::RecipeError);
}

}  // namespace

namespace {

// fuse_norm_relu changes kernels only where cuDNN fuses them (CUDA, fp16,
// channels-last: gpu_checks fusedbn); on the CPU, asked for or not, the
// model is the same model, step for step, and its weights have the same names.
TEST(ResNetV1, FuseNormReluChangesNothingOffTheGpu) {
  const ModelInput input{3, 32, 32, 5};
  for (const std::int64_t depth : {18, 50}) {
    auto fused_params = resnet_params(depth);
    fused_params.set("fuse_norm_relu", true);
    torch::manual_seed(3);
    const auto fused = make_resnet(fused_params, input);
    torch::manual_seed(3);
    const auto plain = make_resnet(resnet_params(depth), input);
    const at::Tensor images = at::randn({4, 3, 32, 32});
    const at::Tensor fused_logits = fused->forward(images);
    const at::Tensor plain_logits = plain->forward(images);
    EXPECT_TRUE(at::equal(fused_logits, plain_logits)) << "depth " << depth;
    fused_logits.sum().backward();
    plain_logits.sum().backward();
    const auto plain_parameters = plain->named_parameters();
    for (const auto& item : fused->named_parameters()) {
      const auto* twin = plain_parameters.find(item.key());
      ASSERT_NE(twin, nullptr) << item.key();
      EXPECT_TRUE(at::equal(item.value().grad(), twin->grad())) << item.key();
    }
    const auto plain_buffers = plain->named_buffers();
    for (const auto& item : fused->named_buffers()) {
      ASSERT_NE(plain_buffers.find(item.key()), nullptr) << item.key();
      EXPECT_TRUE(at::equal(item.value(), *plain_buffers.find(item.key()))) << item.key() << " (running statistics)";
    }
  }
}

}  // namespace

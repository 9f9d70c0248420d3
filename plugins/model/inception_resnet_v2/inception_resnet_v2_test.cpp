#include <ATen/ATen.h>
#include <fnmatch.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
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

const ModelInput kImageNet{3, 299, 299, 1000};

const auto& inception_resnet_entry() {
  return orchestrate::testing::plugin_under_test().models().get("inception_resnet_v2");
}

orchestrate::Params inception_resnet_params(double drop_rate = 0.0) {
  auto params = orchestrate::default_params(inception_resnet_entry().info.schema);
  params.set("drop_rate", drop_rate);
  return params;
}

std::shared_ptr<orchestrate::Model> make_inception_resnet(const ModelInput& input, double drop_rate = 0.0) {
  return inception_resnet_entry().create(inception_resnet_params(drop_rate), input);
}

std::string declined_message(const ModelInput& input) {
  try {
    make_inception_resnet(input);
  } catch (const orchestrate::RecipeError& error) {
    return error.what();
  }
  return "";
}

// 107x139 rather than the 75x75 minimum: the last grid is then 2x3, not 1x1,
// so the 8x8-stage convs' paddings and a height/width swap would show, while
// staying far cheaper than 299x299. Built right after seed 0, as the
// reference is: PyTorch's default init must draw exactly timm's numbers.
TEST(InceptionResnetV2, MatchesTimmInEvalAndTrainModeFromTheSameInitialWeights) {
  torch::manual_seed(0);
  const auto model = make_inception_resnet({3, 107, 139, 7});
  orchestrate::model_testing::ParityOptions options;
  options.python_module = "timm";
  options.same_initial_state = true;
  expect_torchvision_parity(*model,
                            "timm.create_model('inception_resnet_v2', pretrained=False, num_classes=7, drop_rate=0.0)",
                            {2, 3, 107, 139}, options);
}

// timm's count for its ImageNet model (55,843,464, printed by
// sum(p.numel() for p in timm.create_model('inception_resnet_v2').parameters())).
TEST(InceptionResnetV2, ImageNetParameterCountIsTimms) {
  EXPECT_EQ(parameter_count(*make_inception_resnet(kImageNet)), 55843464);
}

TEST(InceptionResnetV2, ForwardTrainGivesLogitsAndNoAuxLogits) {
  at::NoGradGuard no_grad;
  const auto model = make_inception_resnet({3, 75, 75, 10}, /*drop_rate=*/0.5);
  model->train();
  const auto output = model->forward_train(at::rand({2, 3, 75, 75}));
  EXPECT_EQ(output.logits.sizes(), (std::vector<std::int64_t>{2, 10}));
  EXPECT_TRUE(output.aux_logits.empty());
}

TEST(InceptionResnetV2, InputBelowTheMinimumIsARecipeErrorNamingIt) {
  const auto message = declined_message({3, 74, 74, 10});
  EXPECT_NE(message.find("74x74 input is below Inception-ResNet-v2's minimum input of 75x75"), std::string::npos)
      << message;
  EXPECT_NE(declined_message({3, 75, 74, 10}), "");
  EXPECT_NE(declined_message({3, 74, 75, 10}), "");
  EXPECT_EQ(declined_message({3, 75, 75, 10}), "");
  EXPECT_EQ(declined_message({1, 75, 75, 10}), "");  // the stem takes the data's channels
}

// Transfer learning must drop the classifier `classif`, and nothing else.
TEST(InceptionResnetV2, MetaNamesTheHeadNoAuxLogitsAndInceptionPreprocessing) {
  const auto& meta = inception_resnet_entry().meta;
  std::set<std::string> matched;
  for (const auto& parameter : make_inception_resnet(kImageNet)->named_parameters())
    if (::fnmatch(meta.logits_pattern.c_str(), parameter.key().c_str(), 0) == 0) matched.insert(parameter.key());
  EXPECT_EQ(matched, (std::set<std::string>{"classif.bias", "classif.weight"}));
  EXPECT_EQ(meta.input_size, 299);
  EXPECT_TRUE(meta.aux_logits.empty());
  EXPECT_EQ(meta.preprocessing.name, "inception");
}

// PyTorch's default init, which timm keeps for this model (exact equality
// with timm's draws is checked in the parity test): conv weights uniform in
// +-1/sqrt(fan_in) (kaiming_uniform_ with a = sqrt(5)), batch norms 1 and 0
// with TF-slim's eps 0.001.
TEST(InceptionResnetV2, InitIsPyTorchsDefault) {
  torch::manual_seed(0);
  const auto model = make_inception_resnet(kImageNet);
  auto parameters = model->named_parameters();
  const auto& weight = parameters["repeat_1.3.branch1.1.conv.weight"];  // 160x128x1x7: fan_in 896
  const double bound = 1.0 / std::sqrt(128.0 * 7.0);
  EXPECT_LE(weight.abs().max().item<double>(), bound);
  EXPECT_NEAR(weight.std().item<double>(), bound / std::sqrt(3.0), bound * 0.01);
  EXPECT_TRUE(parameters["conv2d_7b.bn.weight"].eq(1).all().item<bool>());
  EXPECT_TRUE(parameters["conv2d_7b.bn.bias"].eq(0).all().item<bool>());
  EXPECT_TRUE(parameters.find("conv2d_1a.conv.bias") == nullptr);  // the batch norm's shift replaces it
  EXPECT_TRUE(parameters.find("block8.conv2d.bias") != nullptr);     // the residual projection keeps its bias
  const auto* norm = model->named_modules()["mixed_5b.branch3.1.bn"]->as<torch::nn::BatchNorm2d>();
  ASSERT_NE(norm, nullptr);
  EXPECT_DOUBLE_EQ(norm->options.eps(), 0.001);
}

}  // namespace

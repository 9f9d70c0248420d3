#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdint>
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

// Dropout 0 on both sides, so train mode is deterministic and comparable.
orchestrate::Params vgg_params(std::int64_t depth, bool batch_norm, double dropout = 0.0) {
  const auto& schema = orchestrate::testing::plugin_under_test().models().get("vgg").info.schema;
  auto params = orchestrate::default_params(schema);
  params.set("depth", depth);
  params.set("batch_norm", batch_norm);
  params.set("dropout", dropout);
  return params;
}

std::shared_ptr<orchestrate::Model> make_vgg(const orchestrate::Params& params, const ModelInput& input) {
  return orchestrate::testing::plugin_under_test().models().get("vgg").create(params, input);
}

// VGG-11 takes the same code path as 13, 16 and 19 (only the layer list
// differs) at a fraction of the time on a small CPU.
TEST(Vgg, Vgg11MatchesTorchvisionNamesWeightsAndLogits) {
  const auto model = make_vgg(vgg_params(11, false), {3, 64, 64, 7});
  expect_torchvision_parity(*model, "torchvision.models.vgg11(num_classes=7, dropout=0.0)", {2, 3, 64, 64});
}

TEST(Vgg, Vgg11WithBatchNormMatchesTorchvisionNamesWeightsAndLogits) {
  const auto model = make_vgg(vgg_params(11, true), {3, 64, 64, 7});
  expect_torchvision_parity(*model, "torchvision.models.vgg11_bn(num_classes=7, dropout=0.0)", {2, 3, 64, 64});
}

// torchvision's documented parameter counts for its ImageNet models.
TEST(Vgg, EveryDepthHasTorchvisionsImageNetParameterCount) {
  EXPECT_EQ(parameter_count(*make_vgg(vgg_params(11, false), kImageNet)), 132863336);
  EXPECT_EQ(parameter_count(*make_vgg(vgg_params(13, false), kImageNet)), 133047848);
  EXPECT_EQ(parameter_count(*make_vgg(vgg_params(16, false), kImageNet)), 138357544);
  EXPECT_EQ(parameter_count(*make_vgg(vgg_params(19, true), kImageNet)), 143678248);
}

TEST(Vgg, SmallestAllowedInputGivesLogitsPerClass) {
  const auto model = make_vgg(vgg_params(11, true, 0.5), {1, 32, 32, 10});
  model->train();
  const auto logits = model->forward(at::rand({2, 1, 32, 32}));
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{2, 10}));
  EXPECT_TRUE(logits.isfinite().all().item<bool>());
}

TEST(Vgg, InputBelowTheMinimumIsARecipeErrorNamingIt) {
  try {
    make_vgg(vgg_params(11, false), {1, 28, 28, 10});
    FAIL() << "expected a RecipeError";
  } catch (const orchestrate::RecipeError& error) {
    EXPECT_NE(std::string(error.what()).find("28x28 input is below VGG's minimum input of 32x32"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(make_vgg(vgg_params(11, false), {3, 64, 31, 10}), orchestrate::RecipeError);
}

TEST(Vgg, InitIsTorchvisions) {
  torch::manual_seed(0);
  const auto model = make_vgg(vgg_params(11, true), {3, 32, 32, 10});
  const auto parameters = model->named_parameters();
  // features.4: the 128-wide conv (conv, bn, relu, pool, conv); fan_out = 128 * 9.
  EXPECT_NEAR(parameters["features.4.weight"].std().item<double>(), std::sqrt(2.0 / (128 * 9)), 0.002);
  EXPECT_TRUE(parameters["features.4.bias"].eq(0).all().item<bool>());
  EXPECT_TRUE(parameters["features.5.weight"].eq(1).all().item<bool>());
  EXPECT_NEAR(parameters["classifier.3.weight"].std().item<double>(), 0.01, 1e-4);
  EXPECT_TRUE(parameters["classifier.6.bias"].eq(0).all().item<bool>());
}

TEST(Vgg, UnsupportedDepthIsRejectedBySchemaAndFactory) {
  const auto& schema = orchestrate::testing::plugin_under_test().models().get("vgg").info.schema;
  const auto params = vgg_params(12, false);
  ASSERT_EQ(schema.broken_rules(params).size(), 1u);
  EXPECT_NE(schema.broken_rules(params)[0].find("use 11, 13, 16 or 19"), std::string::npos);
  EXPECT_THROW(make_vgg(params, kImageNet), orchestrate::RecipeError);
}

}  // namespace

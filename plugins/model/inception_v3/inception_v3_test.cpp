#include <ATen/ATen.h>
#include <fnmatch.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/utils.h>

#include <cstdint>
#include <map>
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

const auto& inception_entry() { return orchestrate::testing::plugin_under_test().models().get("inception_v3"); }

// Dropout 0 by default here, so train mode is deterministic and comparable.
orchestrate::Params inception_params(bool aux_logits, bool transform_input = false, double dropout = 0.0) {
  auto params = orchestrate::default_params(inception_entry().info.schema);
  params.set("aux_logits", aux_logits);
  params.set("transform_input", transform_input);
  params.set("dropout", dropout);
  return params;
}

std::shared_ptr<orchestrate::Model> make_inception(const orchestrate::Params& params, const ModelInput& input) {
  return inception_entry().create(params, input);
}

std::string declined_message(const orchestrate::Params& params, const ModelInput& input) {
  try {
    make_inception(params, input);
  } catch (const orchestrate::RecipeError& error) {
    return error.what();
  }
  return "";
}

// 299x299 is the smallest input the aux head takes. Built right after seed 0,
// as the reference is: the init must draw exactly torchvision's numbers.
TEST(InceptionV3, MatchesTorchvisionWithAuxLogitsInEvalAndTrainMode) {
  torch::manual_seed(0);
  const auto model = make_inception(inception_params(/*aux_logits=*/true), {3, 299, 299, 7});
  orchestrate::model_testing::ParityOptions options;
  options.aux_names = {{"aux_logits", "aux"}};
  options.same_initial_state = true;
  expect_torchvision_parity(
      *model, "torchvision.models.inception_v3(weights=None, num_classes=7, aux_logits=True, init_weights=True, "
              "dropout=0.0)",
      {2, 3, 299, 299}, options);
}

// Without the aux head 75x75 is enough; transform_input rides along.
TEST(InceptionV3, WithoutAuxLogitsAndWithTransformInputMatchesTorchvision) {
  torch::manual_seed(0);
  const auto model = make_inception(inception_params(false, /*transform_input=*/true), {3, 75, 75, 7});
  orchestrate::model_testing::ParityOptions options;
  options.same_initial_state = true;
  expect_torchvision_parity(*model,
                            "torchvision.models.inception_v3(weights=None, num_classes=7, aux_logits=False, "
                            "transform_input=True, init_weights=True, dropout=0.0)",
                            {2, 3, 75, 75}, options);
}

// torchvision's documented count (Inception_V3_Weights meta), and its count
// without AuxLogits.
TEST(InceptionV3, ImageNetParameterCountsAreTorchvisions) {
  EXPECT_EQ(parameter_count(*make_inception(inception_params(true), kImageNet)), 27161264);
  EXPECT_EQ(parameter_count(*make_inception(inception_params(false), kImageNet)), 23834568);
}

TEST(InceptionV3, ForwardTrainGivesAuxLogitsOnlyInTrainModeWithTheAuxHead) {
  at::NoGradGuard no_grad;
  const auto without_aux = make_inception(inception_params(false, false, 0.5), {3, 75, 75, 10});
  without_aux->train();
  const auto output = without_aux->forward_train(at::rand({2, 3, 75, 75}));
  EXPECT_EQ(output.logits.sizes(), (std::vector<std::int64_t>{2, 10}));
  EXPECT_TRUE(output.aux_logits.empty());
  EXPECT_TRUE(without_aux->named_parameters().find("AuxLogits.fc.weight") == nullptr);

  const auto with_aux = make_inception(inception_params(true), {3, 299, 299, 10});
  with_aux->eval();
  EXPECT_TRUE(with_aux->forward_train(at::rand({1, 3, 299, 299})).aux_logits.empty());
}

TEST(InceptionV3, InputBelowTheMinimumIsARecipeErrorNamingIt) {
  const auto with_aux = declined_message(inception_params(true), {3, 298, 298, 10});
  EXPECT_NE(with_aux.find("298x298 input is below Inception v3's minimum input of 299x299"), std::string::npos)
      << with_aux;
  EXPECT_NE(with_aux.find("set aux_logits = false for inputs down to 75x75"), std::string::npos) << with_aux;
  EXPECT_NE(declined_message(inception_params(true), {3, 299, 298, 10}), "");

  const auto without_aux = declined_message(inception_params(false), {3, 74, 74, 10});
  EXPECT_NE(without_aux.find("74x74 input is below Inception v3's minimum input of 75x75"), std::string::npos)
      << without_aux;
  EXPECT_EQ(declined_message(inception_params(false), {3, 75, 75, 10}), "");
}

TEST(InceptionV3, TransformInputNeedsThreeChannels) {
  EXPECT_NE(declined_message(inception_params(false, true), {1, 75, 75, 10}).find("transform_input"),
            std::string::npos);
  EXPECT_EQ(declined_message(inception_params(false, false), {1, 75, 75, 10}), "");  // the stem takes 1 channel
}

// Transfer learning must drop both classifier heads, and nothing else.
TEST(InceptionV3, MetaNamesBothHeadsTheAuxWeightAndInceptionPreprocessing) {
  const auto& meta = inception_entry().meta;
  std::set<std::string> matched;
  for (const auto& parameter : make_inception(inception_params(true), kImageNet)->named_parameters())
    if (::fnmatch(meta.logits_pattern.c_str(), parameter.key().c_str(), 0) == 0) matched.insert(parameter.key());
  EXPECT_EQ(matched, (std::set<std::string>{"AuxLogits.fc.bias", "AuxLogits.fc.weight", "fc.bias", "fc.weight"}));
  EXPECT_EQ(meta.input_size, 299);
  EXPECT_EQ(meta.aux_logits, (std::map<std::string, double>{{"aux", 0.4}}));
  EXPECT_EQ(meta.preprocessing.name, "inception");
}

// Statistics of torchvision's init (exact equality is checked in the parity
// tests), including its quirk: AuxLogits.conv1's stddev 0.01 never applies.
TEST(InceptionV3, InitIsTorchvisions) {
  torch::manual_seed(0);
  const auto model = make_inception(inception_params(true), kImageNet);
  const auto parameters = model->named_parameters();
  EXPECT_NEAR(parameters["Mixed_6e.branch7x7dbl_2.conv.weight"].std().item<double>(), 0.1, 0.001);
  EXPECT_NEAR(parameters["AuxLogits.conv1.conv.weight"].std().item<double>(), 0.1, 0.001);
  EXPECT_NEAR(parameters["fc.weight"].std().item<double>(), 0.1, 0.001);
  EXPECT_NEAR(parameters["AuxLogits.fc.weight"].std().item<double>(), 0.001, 0.00001);
  EXPECT_TRUE(parameters["Mixed_7c.branch_pool.bn.weight"].eq(1).all().item<bool>());
  EXPECT_TRUE(parameters["Mixed_7c.branch_pool.bn.bias"].eq(0).all().item<bool>());
  const auto* norm = model->named_modules()["Conv2d_1a_3x3.bn"]->as<torch::nn::BatchNorm2d>();
  ASSERT_NE(norm, nullptr);
  EXPECT_DOUBLE_EQ(norm->options.eps(), 0.001);
}

}  // namespace

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/adam.h>
#include <torch/serialize/archive.h>
#include <torch/utils.h>

#include <cmath>
#include <functional>
#include <memory>
#include <sstream>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/model.h"
#include "orchestrate/plugin.h"
#include "orchestrate/testing/plugin_under_test.h"


namespace {

using orchestrate::ModelInput;

const ModelInput kFashionMnist{1, 28, 28, 10};

std::shared_ptr<orchestrate::Model> make_convnet(const ModelInput& input,
                                                 const std::function<void(orchestrate::Params&)>& customize = {}) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.models().get("convnet");
  auto params = orchestrate::default_params(entry.info.schema);
  if (customize) customize(params);
  return entry.create(params, input);
}

std::int64_t parameter_count(orchestrate::Model& model) {
  std::int64_t count = 0;
  for (const auto& parameter : model.parameters()) count += parameter.numel();
  return count;
}

std::vector<std::int64_t> shape_of(orchestrate::Model& model, const std::string& name) {
  const auto parameters = model.named_parameters();
  const auto* found = parameters.find(name);
  if (!found) return {};
  return found->sizes().vec();
}

// Same layer shapes and 93,322 weights as the Keras model of the TF tutorial.
// Four images told apart by where a bright square sits, on a little noise:
// a working model fits them within a few dozen steps.
at::Tensor four_distinct_images() {
  auto images = 0.1 * at::rand({4, 1, 28, 28});
  const std::int64_t corners[4][2] = {{0, 0}, {0, 20}, {20, 0}, {20, 20}};
  for (std::int64_t k = 0; k < 4; ++k) images[k][0].narrow(0, corners[k][0], 8).narrow(1, corners[k][1], 8).fill_(1.0);
  return images;
}

TEST(ConvNet, DefaultsMatchTheTensorFlowTutorialModel) {
  auto model = make_convnet(kFashionMnist);
  EXPECT_EQ(parameter_count(*model), 93322);
  EXPECT_EQ(shape_of(*model, "conv1.weight"), (std::vector<std::int64_t>{32, 1, 3, 3}));
  EXPECT_EQ(shape_of(*model, "conv2.weight"), (std::vector<std::int64_t>{64, 32, 3, 3}));
  EXPECT_EQ(shape_of(*model, "conv3.weight"), (std::vector<std::int64_t>{64, 64, 3, 3}));
  EXPECT_EQ(shape_of(*model, "dense.weight"), (std::vector<std::int64_t>{64, 3 * 3 * 64}));
  EXPECT_EQ(shape_of(*model, "logits.weight"), (std::vector<std::int64_t>{10, 64}));
}

TEST(ConvNet, FlattenSizeFollowsInputAndFilters) {
  auto model = make_convnet({3, 32, 32, 5}, [](orchestrate::Params& params) {
    params.set("filters", std::vector<std::int64_t>{8, 16});
    params.set("dense_units", std::int64_t{32});
  });
  // 32 -conv-> 30 -pool-> 15 -conv-> 13, no pool after the last conv.
  EXPECT_EQ(shape_of(*model, "dense.weight"), (std::vector<std::int64_t>{32, 16 * 13 * 13}));
  EXPECT_EQ(shape_of(*model, "logits.weight"), (std::vector<std::int64_t>{5, 32}));
  EXPECT_EQ(shape_of(*model, "conv3.weight"), std::vector<std::int64_t>{});
}

// The model pools before its ReLUs; the tutorial's order (ReLU, then pool)
// gives the same logits and the same gradients, bit for bit, in either memory
// layout, negative windows and ties included.
TEST(ConvNet, PoolingBeforeTheReluIsTheTutorialsOrderToTheBit) {
  for (const auto format : {at::MemoryFormat::Contiguous, at::MemoryFormat::ChannelsLast}) {
    at::manual_seed(3);
    auto model = make_convnet(kFashionMnist);
    auto images = at::randn({8, 1, 28, 28});
    images.narrow(0, 0, 1).fill_(-1.0);  // every window negative
    images.narrow(0, 1, 1).fill_(0.5);   // every window a tie
    const auto named = model->named_parameters();
    std::vector<at::Tensor> weights;
    for (const char* name : {"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "conv3.weight", "conv3.bias",
                             "dense.weight", "dense.bias", "logits.weight", "logits.bias"})
      weights.push_back(named[name]);
    if (format == at::MemoryFormat::ChannelsLast)
      for (std::size_t i = 0; i < 6; i += 2)
        weights[i].set_data(at::empty_like(weights[i], format).copy_(weights[i]));
    const auto gradients = [&](const at::Tensor& logits) {
      for (auto& weight : weights) weight.mutable_grad() = at::Tensor();
      logits.pow(2).sum().backward();
      std::vector<at::Tensor> out;
      for (auto& weight : weights) out.push_back(weight.grad().clone());
      return out;
    };
    const at::Tensor ours = model->forward(images);
    const auto our_gradients = gradients(ours);
    // The tutorial's order, by hand with the same weights.
    at::Tensor x = at::relu(at::conv2d(images, weights[0], weights[1]));
    x = at::relu(at::conv2d(at::max_pool2d(x, 2), weights[2], weights[3]));
    x = at::relu(at::conv2d(at::max_pool2d(x, 2), weights[4], weights[5]));
    const at::Tensor tutorial = at::linear(at::relu(at::linear(x.flatten(1), weights[6], weights[7])), weights[8],
                                           weights[9]);
    const auto tutorial_gradients = gradients(tutorial);
    EXPECT_TRUE(at::equal(ours, tutorial)) << "format " << format;
    for (std::size_t i = 0; i < weights.size(); ++i)
      EXPECT_TRUE(at::equal(our_gradients[i], tutorial_gradients[i])) << "parameter " << i << ", format " << format;
  }
}

TEST(ConvNet, ForwardGivesFiniteLogitsPerClass) {
  auto model = make_convnet({3, 32, 32, 5});
  const auto logits = model->forward(at::rand({4, 3, 32, 32}));
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{4, 5}));
  EXPECT_TRUE(logits.isfinite().all().item<bool>());
}

TEST(ConvNet, BackwardGivesEveryParameterAGradient) {
  auto model = make_convnet(kFashionMnist);
  const auto logits = model->forward(at::rand({2, 1, 28, 28}));
  at::cross_entropy_loss(logits, at::tensor(std::vector<std::int64_t>{3, 7})).backward();
  for (const auto& parameter : model->named_parameters()) {
    ASSERT_TRUE(parameter.value().grad().defined()) << parameter.key();
    EXPECT_GT(parameter.value().grad().abs().sum().item<double>(), 0.0) << parameter.key();
  }
}

TEST(ConvNet, AdamStepsReduceLossOnAFixedBatch) {
  torch::manual_seed(0);
  auto model = make_convnet(kFashionMnist);
  const auto images = four_distinct_images();
  const auto labels = at::tensor(std::vector<std::int64_t>{0, 1, 2, 3});
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(3e-3));
  double first_loss = 0.0;
  double last_loss = 0.0;
  for (int step = 0; step < 30; ++step) {
    optimizer.zero_grad();
    auto loss = at::cross_entropy_loss(model->forward(images), labels);
    loss.backward();
    optimizer.step();
    (step == 0 ? first_loss : last_loss) = loss.item<double>();
  }
  EXPECT_NEAR(first_loss, std::log(10.0), 0.3);  // untrained: about uniform over the classes
  EXPECT_LT(last_loss, 0.1 * first_loss);
}

TEST(ConvNet, SavedWeightsLoadIntoAFreshModel) {
  auto trained = make_convnet(kFashionMnist);
  auto fresh = make_convnet(kFashionMnist);
  const auto images = at::rand({3, 1, 28, 28});
  ASSERT_FALSE(trained->forward(images).equal(fresh->forward(images)));

  torch::serialize::OutputArchive output;
  trained->save(output);
  std::stringstream bytes;
  output.save_to(bytes);
  torch::serialize::InputArchive input;
  input.load_from(bytes);
  fresh->load(input);
  EXPECT_TRUE(trained->forward(images).equal(fresh->forward(images)));
}

TEST(ConvNet, InputTooSmallForTheLayersIsARecipeError) {
  try {
    make_convnet({1, 8, 8, 10});
    FAIL() << "expected a RecipeError";
  } catch (const orchestrate::RecipeError& error) {
    EXPECT_NE(std::string(error.what()).find("8x8 input is too small for 3 conv layers"), std::string::npos)
        << error.what();
  }
}

TEST(ConvNet, EmptyFilterListIsARecipeError) {
  EXPECT_THROW(make_convnet(kFashionMnist,
                            [](orchestrate::Params& params) { params.set("filters", std::vector<std::int64_t>{}); }),
               orchestrate::RecipeError);
}

}  // namespace

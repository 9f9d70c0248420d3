#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include <cmath>
#include <memory>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/model.h"
#include "orchestrate/plugin.h"
#include "orchestrate/testing/plugin_under_test.h"


namespace {

using orchestrate::ModelInput;

std::shared_ptr<orchestrate::Model> make_lenet(const ModelInput& input) {
  auto& registry = orchestrate::testing::plugin_under_test();
  const auto& entry = registry.models().get("lenet");
  return entry.create(orchestrate::default_params(entry.info.schema), input);
}

std::int64_t parameter_count(orchestrate::Model& model) {
  std::int64_t count = 0;
  for (const auto& parameter : model.parameters()) count += parameter.numel();
  return count;
}

std::vector<std::int64_t> shape_of(orchestrate::Model& model, const std::string& name) {
  const auto parameters = model.named_parameters();
  const auto* found = parameters.find(name);
  return found ? found->sizes().vec() : std::vector<std::int64_t>{};
}

// Four images told apart by where a bright square sits, on a little noise:
// a working model fits them within a few dozen steps.
at::Tensor four_distinct_images() {
  auto images = 0.1 * at::rand({4, 1, 28, 28});
  const std::int64_t corners[4][2] = {{0, 0}, {0, 20}, {20, 0}, {20, 20}};
  for (std::int64_t k = 0; k < 4; ++k) images[k][0].narrow(0, corners[k][0], 8).narrow(1, corners[k][1], 8).fill_(1.0);
  return images;
}

TEST(LeNet5, HasTheClassicLayerSizesOn28x28) {
  auto model = make_lenet({1, 28, 28, 10});
  EXPECT_EQ(shape_of(*model, "conv1.weight"), (std::vector<std::int64_t>{6, 1, 5, 5}));
  EXPECT_EQ(shape_of(*model, "conv2.weight"), (std::vector<std::int64_t>{16, 6, 5, 5}));
  EXPECT_EQ(shape_of(*model, "fc1.weight"), (std::vector<std::int64_t>{120, 16 * 5 * 5}));
  EXPECT_EQ(shape_of(*model, "fc2.weight"), (std::vector<std::int64_t>{84, 120}));
  EXPECT_EQ(shape_of(*model, "fc3.weight"), (std::vector<std::int64_t>{10, 84}));
  EXPECT_EQ(parameter_count(*model), 61706);
}

TEST(LeNet5, SizesItsFirstDenseLayerFromLargerColourInputs) {
  auto model = make_lenet({3, 32, 32, 5});
  // 32 -pool-> 16 -conv-> 12 -pool-> 6.
  EXPECT_EQ(shape_of(*model, "conv1.weight"), (std::vector<std::int64_t>{6, 3, 5, 5}));
  EXPECT_EQ(shape_of(*model, "fc1.weight"), (std::vector<std::int64_t>{120, 16 * 6 * 6}));
  const auto logits = model->forward(at::rand({4, 3, 32, 32}));
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{4, 5}));
  EXPECT_TRUE(logits.isfinite().all().item<bool>());
}

TEST(LeNet5, AcceptsNonSquareInputs) {
  auto model = make_lenet({1, 28, 40, 3});
  EXPECT_EQ(model->forward(at::rand({2, 1, 28, 40})).sizes(), (std::vector<std::int64_t>{2, 3}));
}

TEST(LeNet5, BackwardGivesEveryParameterAGradient) {
  auto model = make_lenet({1, 28, 28, 10});
  const auto logits = model->forward(at::rand({2, 1, 28, 28}));
  at::cross_entropy_loss(logits, at::tensor(std::vector<std::int64_t>{1, 8})).backward();
  for (const auto& parameter : model->named_parameters()) {
    ASSERT_TRUE(parameter.value().grad().defined()) << parameter.key();
    EXPECT_GT(parameter.value().grad().abs().sum().item<double>(), 0.0) << parameter.key();
  }
}

TEST(LeNet5, AdamStepsReduceLossOnAFixedBatch) {
  torch::manual_seed(0);
  auto model = make_lenet({1, 28, 28, 10});
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

TEST(LeNet5, InputSmallerThan12PixelsIsARecipeError) {
  EXPECT_THROW(make_lenet({1, 11, 28, 10}), orchestrate::RecipeError);
  EXPECT_NO_THROW(make_lenet({1, 12, 12, 10}));
}

}  // namespace

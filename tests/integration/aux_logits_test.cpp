// Auxiliary classifiers (Inception's AuxLogits): the trainer adds their loss
// with the declared or recipe weight in training only, and logs it apart
// from train/loss. A two-head model is registered in process for the test.
#include <gtest/gtest.h>

#include <torch/nn/modules/linear.h>

#include "build_paths.h"
#include "engine/recipe/recipe.h"
#include "engine/setup/plugin_host.h"
#include "engine/train/trainer.h"
#include "orchestrate/model.h"
#include "orchestrate/model_presets.h"
#include "orchestrate/testing/scratch_dir.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

// A linear model with a second, auxiliary head on the same input.
class TwoHeads : public Model {
 public:
  explicit TwoHeads(const ModelInput& input) {
    const auto features = input.channels * input.height * input.width;
    main_ = register_module("fc", torch::nn::Linear(features, input.num_classes));
    aux_ = register_module("aux_fc", torch::nn::Linear(features, input.num_classes));
  }
  at::Tensor forward(const at::Tensor& images) override { return main_->forward(images.flatten(1)); }
  ModelOutput forward_train(const at::Tensor& images) override {
    return {forward(images), {{"aux", aux_->forward(images.flatten(1))}}};
  }

 private:
  torch::nn::Linear main_{nullptr}, aux_{nullptr};
};

const std::string kRecipe = R"(schema_version = 1
[run]
name = "aux"
batch_size = 16
max_steps = 12
log_every = 4
threads = 1
[data]
plugin = "mock"
channels = 1
height = 8
width = 8
train_size = 256
test_size = 32
[model]
plugin = "two_heads"
[optimizer]
plugin = "sgd"
lr = 0.1
[checkpoint]
every_epochs = 0
at_end = false
)";

class AuxLogits : public ::testing::Test {
 protected:
  void SetUp() override {
    load_plugins(registry_, {orchestrate::build_paths::kTestPluginDir});
    registry_.models().add(
        "two_heads", "test model with an auxiliary head", {},
        [this](const Params&, const ModelInput& input) {
          model_ = std::make_shared<TwoHeads>(input);
          initial_aux_ = model_->named_parameters()["aux_fc.weight"].detach().clone();
          return model_;
        },
        ModelMeta{"*fc.*", 8, {{"aux", 0.4}}, no_preprocessing()});
  }

  // The aux head's weights after training with these overrides, and the run's metrics.
  std::pair<at::Tensor, std::map<std::string, double>> train_with(const std::vector<std::string>& sets) {
    const auto path = dir_.write("aux" + std::to_string(count_++) + ".toml", kRecipe);
    const Recipe recipe = load_recipe(path, parse_overrides(sets), registry_);
    RunStore store(dir_.file("runs.db"));
    const auto outcome = train(recipe, registry_, store, {});
    EXPECT_EQ(outcome.status, RunStatus::finished);
    return {model_->named_parameters()["aux_fc.weight"].detach().clone(), outcome.final_metrics};
  }

  Registry registry_;
  ScratchDir dir_;
  std::shared_ptr<TwoHeads> model_;
  at::Tensor initial_aux_;  // the aux head's weights as the last model was built
  int count_ = 0;
};

TEST_F(AuxLogits, TheAuxLossIsLoggedApartAndWeightedAsDeclaredOrSet) {
  const auto [declared, metrics] = train_with({});
  ASSERT_TRUE(metrics.count("train/aux_loss"));
  EXPECT_TRUE(std::isfinite(metrics.at("train/aux_loss")));
  EXPECT_NE(metrics.at("train/aux_loss"), metrics.at("train/loss"));

  // Weight 0: the aux head gets no gradient, so it keeps its initial weights.
  const auto [untrained, unused] = train_with({"loss.aux_weight=0.0"});
  EXPECT_TRUE(at::equal(untrained, initial_aux_));
  EXPECT_FALSE(at::equal(declared, untrained));

  // The declared 0.4 and an explicit 0.4 are the same run; 1.0 is another.
  const auto [explicit_weight, also_unused] = train_with({"loss.aux_weight=0.4"});
  EXPECT_TRUE(at::equal(declared, explicit_weight));
  const auto [heavier, still_unused] = train_with({"loss.aux_weight=1.0"});
  EXPECT_FALSE(at::equal(declared, heavier));
}

}  // namespace
}  // namespace orchestrate::testing

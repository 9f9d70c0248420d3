// The model contract: logits, gradients, aux logits, tracing for serving.
// Part of share/doc/design.md's promise that each kind has a conformance test
// every plugin of that kind passes; run on the components conformance_plugins.h
// selected (`orchestrate conformance`).
#include <ATen/ATen.h>
#include <fnmatch.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "export/serving_module.h"
#include "orchestrate/error.h"
#include "orchestrate/model.h"

#include "conformance/conformance_plugins.h"

namespace {

using orchestrate::ComponentKind;
using namespace orchestrate::conformance;  // registry(), selected_names(), params_for(), ...

class ModelConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ModelConformance);

using ModelEntry = orchestrate::ComponentRegistry<orchestrate::ModelFactory, orchestrate::ModelMeta>::Entry;

// The inputs every model is tried on: Fashion-MNIST-sized, then CIFAR-sized;
// then, only for a model that declined both, ImageNet-sized at the smallest
// side Inception v3 with its aux head takes (299), to keep the test fast.
const std::vector<orchestrate::ModelInput> kSampleInputs{{1, 28, 28, 10}, {3, 32, 32, 5}, {3, 299, 299, 4}};
constexpr std::size_t kInputsEveryModelIsTriedOn = 2;

std::string describe(const orchestrate::ModelInput& input) {
  return std::to_string(input.channels) + "x" + std::to_string(input.height) + "x" + std::to_string(input.width) +
         ", " + std::to_string(input.num_classes) + " classes";
}

// A model may decline an input below the minimum size it documents (VGG's
// five max pools need 32x32): its factory throws an orchestrate::Error whose
// message says "minimum input". Returns null for that, rethrows anything else
// (a factory that returns null itself fails the test).
std::shared_ptr<orchestrate::Model> create_unless_below_minimum(const ModelEntry& entry,
                                                                const orchestrate::Params& params,
                                                                const orchestrate::ModelInput& input) {
  try {
    auto model = entry.create(params, input);
    EXPECT_NE(model, nullptr) << "the factory returned no model for " << describe(input);
    return model;
  } catch (const orchestrate::Error& error) {
    if (std::string(error.what()).find("minimum input") == std::string::npos) throw;
    std::cout << "[ declined ] " << entry.info.name << " on " << describe(input) << ": " << error.what() << "\n";
    return nullptr;
  }
}

TEST_P(ModelConformance, ForwardGivesFiniteLogitsAndBackwardReachesEveryParameter) {
  const auto& entry = registry().models().get(GetParam());
  const auto params = params_for(ComponentKind::model, GetParam());
  int accepted = 0;
  for (std::size_t index = 0; index < kSampleInputs.size(); ++index) {
    const auto& input = kSampleInputs[index];
    if (accepted > 0 && index >= kInputsEveryModelIsTriedOn) break;
    SCOPED_TRACE(describe(input));
    torch::manual_seed(0);
    const auto model = create_unless_below_minimum(entry, params, input);
    if (!model) continue;
    ++accepted;
    ASSERT_FALSE(model->parameters().empty());
    model->train();
    // As the trainer runs it, so aux logits (Inception's) reach their own head's parameters.
    const auto output = model->forward_train(at::rand({3, input.channels, input.height, input.width}));
    const auto labels = at::tensor(std::vector<std::int64_t>{0, 1, 2});
    auto loss = at::zeros({});
    std::map<std::string, at::Tensor> all_logits = output.aux_logits;
    all_logits.emplace("logits", output.logits);
    for (const auto& [name, logits] : all_logits) {
      SCOPED_TRACE(name);
      ASSERT_EQ(logits.sizes(), (std::vector<std::int64_t>{3, input.num_classes}));
      EXPECT_EQ(logits.scalar_type(), at::kFloat);
      EXPECT_TRUE(logits.isfinite().all().item<bool>());
      loss = loss + at::cross_entropy_loss(logits, labels);
    }
    loss.backward();
    for (const auto& parameter : model->named_parameters()) {
      ASSERT_TRUE(parameter.value().grad().defined()) << parameter.key() << " got no gradient";
      EXPECT_TRUE(parameter.value().grad().isfinite().all().item<bool>()) << parameter.key();
    }
  }
  EXPECT_GT(accepted, 0) << "the model declined every sample input";
}

// The trainer weights each auxiliary classifier by name (ModelMeta::aux_logits):
// forward_train must return exactly the declared ones, shaped like the logits,
// and its main logits must be what forward() gives.
TEST_P(ModelConformance, TrainingForwardReturnsExactlyTheDeclaredAuxLogits) {
  const auto& entry = registry().models().get(GetParam());
  const auto params = params_for(ComponentKind::model, GetParam());
  for (const auto& input : kSampleInputs) {
    SCOPED_TRACE(describe(input));
    torch::manual_seed(0);
    const auto model = create_unless_below_minimum(entry, params, input);
    if (!model) continue;
    model->train();
    const auto images = at::rand({2, input.channels, input.height, input.width});
    torch::manual_seed(1);
    const auto output = model->forward_train(images);
    ASSERT_EQ(output.logits.sizes(), (std::vector<std::int64_t>{2, input.num_classes}));
    std::vector<std::string> returned, declared;
    for (const auto& [name, logits] : output.aux_logits) {
      returned.push_back(name);
      EXPECT_EQ(logits.sizes(), output.logits.sizes()) << "aux logits '" << name << "'";
    }
    for (const auto& [name, weight] : entry.meta.aux_logits) {
      declared.push_back(name);
      EXPECT_GT(weight, 0) << "aux logits '" << name << "' need a positive default loss weight";
    }
    EXPECT_EQ(returned, declared);
    model->eval();
    EXPECT_EQ(model->forward(images).sizes(), output.logits.sizes());
    return;  // one accepted input is enough
  }
}

// Transfer learning leaves out the classifier head by the model's declared
// logits pattern ([checkpoint] exclude = ["@logits"]): it must name exactly
// the tensors whose shape follows num_classes, and no others.
TEST_P(ModelConformance, LogitsPatternNamesExactlyTheTensorsShapedByNumClasses) {
  const auto& entry = registry().models().get(GetParam());
  const std::string& pattern = entry.meta.logits_pattern;
  ASSERT_FALSE(pattern.empty()) << "declare ModelMeta{logits_pattern} at registration";
  const auto params = params_for(ComponentKind::model, GetParam());
  torch::manual_seed(0);
  std::shared_ptr<orchestrate::Model> with10, with7;
  for (const auto& input : kSampleInputs) {  // the first one the model accepts
    with10 = create_unless_below_minimum(entry, params, {input.channels, input.height, input.width, 10});
    if (!with10) continue;
    with7 = entry.create(params, {input.channels, input.height, input.width, 7});
    break;
  }
  ASSERT_NE(with10, nullptr) << "the model declined every sample input";
  const auto others = with7->named_parameters();
  for (const auto& parameter : with10->named_parameters()) {
    const bool in_head = ::fnmatch(pattern.c_str(), parameter.key().c_str(), 0) == 0;
    const bool follows_classes = parameter.value().sizes() != others[parameter.key()].sizes();
    EXPECT_EQ(in_head, follows_classes) << parameter.key() << " vs logits pattern \"" << pattern << "\"";
  }
}

// `export serving` traces forward() with LibTorch's tracer: every model must
// trace into a module whose logits equal forward()'s at any batch size (no
// control flow on the batch), in eval mode, with the model's parameter names.
TEST_P(ModelConformance, TracesForServingWithTheSameLogitsAndNames) {
  const auto& entry = registry().models().get(GetParam());
  const auto params = params_for(ComponentKind::model, GetParam());
  for (const auto& input : kSampleInputs) {  // the first one the model accepts
    torch::manual_seed(0);
    const auto model = create_unless_below_minimum(entry, params, input);
    if (!model) continue;
    auto serving = orchestrate::trace_serving_module(*model, input.channels, input.height, input.width, 3);
    at::NoGradGuard no_grad;
    const auto images = at::rand({1, input.channels, input.height, input.width});
    const auto outputs = serving.forward({images}).toTupleRef().elements();
    EXPECT_TRUE(at::allclose(outputs.at(0).toTensor(), model->forward(images), 1e-5, 1e-5));
    EXPECT_EQ(outputs.at(1).toTensor().sizes(), (at::IntArrayRef{1, 3}));
    std::size_t named = 0;
    const auto parameters = model->named_parameters();
    for (const auto& p : serving.named_parameters()) named += parameters.contains(p.name);
    EXPECT_EQ(named, parameters.size());
    return;
  }
}

INSTANTIATE_TEST_SUITE_P(All, ModelConformance, testing::ValuesIn(selected_names(ComponentKind::model)),
                         name_of_param);

}  // namespace

// The per-kind contracts of share/doc/design.md ("each kind has a conformance test that
// every plugin of that kind passes"), checked for every component of every
// plugin in the build's plugin directory, loaded through the real host.
#include <ATen/ATen.h>
#include <dirent.h>
#include <fnmatch.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/gradient_compression.h"
#include "orchestrate/hook.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/model.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/optimizer_wrapper.h"
#include "orchestrate/preprocessing.h"
#include "orchestrate/registry.h"
#include "core_tables.h"
#include "plugin_host.h"
#include "serving_module.h"

namespace {

using orchestrate::ComponentKind;

// Loaded once for the whole program: GoogleTest asks for the parameter lists
// before any test runs, and the libraries must outlive every component.
struct LoadedPlugins {
  orchestrate::Registry registry;
  std::string error;  // why loading failed; empty when it did not

  LoadedPlugins() {
    try {
      orchestrate::load_plugins(registry, {ORCHESTRATE_TEST_PLUGIN_DIR});
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
};

LoadedPlugins& loaded() {
  static LoadedPlugins plugins;
  return plugins;
}

orchestrate::Registry& registry() { return loaded().registry; }

std::vector<std::string> component_names(ComponentKind kind) {
  std::vector<std::string> names;
  for (const auto* info : registry().components(kind)) names.push_back(info->name);
  return names;
}

std::string name_of_param(const testing::TestParamInfo<std::string>& info) { return info.param; }

// Defaults, and for a required key the smallest value its bounds allow, so
// every component can be built without a recipe.
orchestrate::Params sample_params(const orchestrate::ParamSchema& schema) {
  orchestrate::Params params;
  for (const auto& spec : schema.specs()) {
    if (spec.default_value) {
      params.set(spec.name, *spec.default_value);
      continue;
    }
    const double low = spec.min ? *spec.min + (spec.min_exclusive ? 1 : 0) : 1;
    switch (spec.type) {
      case orchestrate::ParamType::integer: params.set(spec.name, static_cast<std::int64_t>(std::ceil(low))); break;
      case orchestrate::ParamType::real: params.set(spec.name, low); break;
      case orchestrate::ParamType::boolean: params.set(spec.name, false); break;
      case orchestrate::ParamType::string:
        params.set(spec.name, spec.choices.empty() ? std::string() : spec.choices.front());
        break;
      default: ADD_FAILURE() << spec.name << ": a required list has no sample value"; break;
    }
  }
  return params;
}

std::size_t plugin_files_in(const std::string& dir) {
  std::size_t count = 0;
  if (DIR* listing = opendir(dir.c_str())) {
    while (const dirent* entry = readdir(listing)) {
      const std::string name = entry->d_name;
      count += name.rfind("liborchestrate_", 0) == 0 && name.size() > 3 && name.substr(name.size() - 3) == ".so";
    }
    closedir(listing);
  }
  return count;
}

TEST(Conformance, EveryBuiltPluginLoadsAndEveryKindHasAComponent) {
  ASSERT_EQ(loaded().error, "");
  EXPECT_EQ(registry().plugins().size(), plugin_files_in(ORCHESTRATE_TEST_PLUGIN_DIR));
  for (const auto kind : orchestrate::all_component_kinds())
    EXPECT_FALSE(registry().components(kind).empty()) << "no " << orchestrate::to_string(kind) << " component";
}

// --- What every component declares, whatever its kind ----------------------

struct ComponentRef {
  ComponentKind kind;
  std::string name;
};

// Names the instance in test listings (GoogleTest would dump its bytes).
void PrintTo(const ComponentRef& component, std::ostream* out) {
  *out << orchestrate::to_string(component.kind) << " " << component.name;
}

std::vector<ComponentRef> all_components() {
  std::vector<ComponentRef> out;
  for (const auto kind : orchestrate::all_component_kinds())
    for (const auto& name : component_names(kind)) out.push_back({kind, name});
  return out;
}

class ComponentMetadata : public testing::TestWithParam<ComponentRef> {};

TEST_P(ComponentMetadata, HasASummaryAndDocumentedParamsWithValidDefaults) {
  const auto& info = registry().component(GetParam().kind, GetParam().name);
  EXPECT_FALSE(info.summary.empty());
  EXPECT_FALSE(info.plugin.empty());
  for (const auto& spec : info.schema.specs()) {
    SCOPED_TRACE(spec.name);
    EXPECT_FALSE(spec.doc.empty());
    if (spec.default_value) EXPECT_EQ(spec.check(*spec.default_value), "");
  }
}

// A component key the core also reads in the same table would be taken by
// the core, and the component would never see the user's value.
TEST_P(ComponentMetadata, DeclaresNoKeyTheCoreReadsInItsTable) {
  const auto& info = registry().component(GetParam().kind, GetParam().name);
  std::vector<const orchestrate::TableSpec*> tables;
  for (const auto& table : orchestrate::recipe_tables()) {
    tables.push_back(&table);
    for (const auto& list : table.lists) tables.push_back(&list);
  }
  for (const auto* table : tables) {
    if (table->kind != GetParam().kind) continue;
    EXPECT_EQ(info.schema.find("plugin"), nullptr);
    for (const auto& spec : table->schema.specs())
      EXPECT_EQ(info.schema.find(spec.name), nullptr)
          << "'" << spec.name << "' is a core key of [" << table->name << "]; rename the component's key";
  }
}

INSTANTIATE_TEST_SUITE_P(All, ComponentMetadata, testing::ValuesIn(all_components()),
                         [](const testing::TestParamInfo<ComponentRef>& info) {
                           return std::string(orchestrate::to_string(info.param.kind)) + "_" + info.param.name;
                         });

// --- dataset ----------------------------------------------------------------

class DatasetConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DatasetConformance);

// A dataset that reads the user's files has no default that finds data; it is
// tried on a small sample committed under tests/data (tests/data/README.md
// says how each was made), with these keys over its defaults.
orchestrate::Params dataset_params(const std::string& name, const orchestrate::ParamSchema& schema) {
  static const std::map<std::string, std::map<std::string, orchestrate::ParamValue>> samples{
      {"tfrecord",
       {{"dir", std::string(ORCHESTRATE_TEST_DATA_DIR "/fashion_mnist_tfrecord")},
        {"index_cache_dir", std::string("off")}}},
      {"image_folder", {{"root", std::string(ORCHESTRATE_TEST_DATA_DIR "/fashion_mnist_folder")}}},
      {"idx",
       {{"train_images", std::string("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")},
        {"train_labels", std::string("/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz")},
        {"test_images", std::string("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz")},
        {"test_labels", std::string("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz")},
        {"limit", std::int64_t{64}}}},
  };
  auto params = sample_params(schema);
  if (const auto sample = samples.find(name); sample != samples.end())
    for (const auto& [key, value] : sample->second) params.set(key, value);
  return params;
}

orchestrate::SampleRequest request_for(std::int64_t index) {
  orchestrate::SampleRequest request;
  request.index = index;
  request.seed = static_cast<std::uint64_t>(index) * 7919;
  return request;
}

void expect_examples_equal(const orchestrate::Example& a, const orchestrate::Example& b) {
  EXPECT_TRUE(a.pixels.equal(b.pixels));
  EXPECT_EQ(a.label, b.label);
}

TEST_P(DatasetConformance, DefaultsBuildBothSplitsWhoseExamplesMatchInfo) {
  const auto& entry = registry().datasets().get(GetParam());
  const auto params = dataset_params(GetParam(), entry.info.schema);
  for (const auto split : {orchestrate::DatasetSplit::train, orchestrate::DatasetSplit::test}) {
    SCOPED_TRACE(orchestrate::to_string(split));
    const auto dataset = entry.create(params, split);
    ASSERT_NE(dataset, nullptr);
    const std::int64_t size = dataset->size();
    ASSERT_GT(size, 0);
    const auto info = dataset->info();
    ASSERT_TRUE(info.channels == 1 || info.channels == 3) << info.channels;
    ASSERT_GE(info.height, 0);
    ASSERT_EQ(info.height == 0, info.width == 0) << "a fixed size has both sides";
    ASSERT_GE(info.num_classes, 2);
    if (!info.class_names.empty()) EXPECT_EQ(info.class_names.size(), static_cast<std::size_t>(info.num_classes));

    for (const std::int64_t index : {std::int64_t{0}, size - 1, size / 2}) {
      SCOPED_TRACE(index);
      const auto example = dataset->example(request_for(index));
      ASSERT_EQ(example.pixels.scalar_type(), at::kByte);
      ASSERT_EQ(example.pixels.dim(), 3);
      EXPECT_TRUE(example.pixels.is_contiguous());
      EXPECT_EQ(example.pixels.size(2), info.channels);
      if (info.height > 0) {
        EXPECT_EQ(example.pixels.size(0), info.height);
        EXPECT_EQ(example.pixels.size(1), info.width);
      }
      EXPECT_GE(example.label, 0);
      EXPECT_LT(example.label, info.num_classes);
      expect_examples_equal(dataset->example(request_for(index)), example);  // the same every time
      // ... and in every epoch, whatever the seed: the pipeline's cache ([run] cache_mb) keeps it.
      auto later = request_for(index);
      later.epoch = 3;
      later.seed = 0x5eedULL;
      expect_examples_equal(dataset->example(later), example);
    }
    EXPECT_THROW(dataset->example(request_for(size)), std::out_of_range);
    EXPECT_THROW(dataset->example(request_for(-1)), std::out_of_range);
  }
}

TEST_P(DatasetConformance, ConcurrentExamplesMatchSerialOnes) {
  const auto& entry = registry().datasets().get(GetParam());
  const auto dataset = entry.create(dataset_params(GetParam(), entry.info.schema), orchestrate::DatasetSplit::train);
  const std::int64_t count = std::min<std::int64_t>(dataset->size(), 16);
  std::vector<orchestrate::Example> expected;
  for (std::int64_t i = 0; i < count; ++i) expected.push_back(dataset->example(request_for(i)));
  std::vector<std::vector<orchestrate::Example>> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results)
    threads.emplace_back([&] {
      for (std::int64_t i = 0; i < count; ++i) result.push_back(dataset->example(request_for(i)));
    });
  for (auto& thread : threads) thread.join();
  for (const auto& result : results)
    for (std::int64_t i = 0; i < count; ++i) expect_examples_equal(result[i], expected[i]);
}

INSTANTIATE_TEST_SUITE_P(All, DatasetConformance, testing::ValuesIn(component_names(ComponentKind::dataset)),
                         name_of_param);

// --- preprocessing ----------------------------------------------------------

class PreprocessingConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PreprocessingConformance);

// preprocessing.h's contract, for both variants, on grey and RGB data: the
// prepared sample has the declared shape, is uint8 and depends only on the
// seed (not on the thread); the eval variant ignores the seed; finish_batch
// makes float32 NCHW; both variants give the model one shape.
TEST_P(PreprocessingConformance, PreparesDeclaredShapesFromTheSeedAlone) {
  const auto& entry = registry().preprocessing().get(GetParam());
  const auto params = sample_params(entry.info.schema);
  for (const std::int64_t channels : {1, 3}) {
    SCOPED_TRACE(channels);
    // A fixed-size split, so a preprocessing that does not resize can serve it too.
    const orchestrate::DatasetInfo data{channels, 60, 44, 10, {}};
    const auto image = at::randint(0, 256, {60, 44, channels}, at::kByte);
    std::vector<orchestrate::ImageShape> shapes;
    for (const auto variant : {orchestrate::PreprocessingVariant::train, orchestrate::PreprocessingVariant::eval}) {
      SCOPED_TRACE(orchestrate::to_string(variant));
      const auto preprocessing = entry.create(params, orchestrate::PreprocessingContext{variant, data});
      ASSERT_TRUE(preprocessing) << "the factory returned no preprocessing";
      const auto shape = preprocessing->output_shape();
      shapes.push_back(shape);
      ASSERT_EQ(shape.channels, channels);
      const auto sample = preprocessing->prepare_sample(image, 12345);
      ASSERT_EQ(sample.scalar_type(), at::kByte);
      ASSERT_EQ(sample.sizes(), (at::IntArrayRef{shape.height, shape.width, channels}));
      EXPECT_TRUE(sample.is_contiguous());
      std::vector<at::Tensor> from_threads(4);
      std::vector<std::thread> threads;
      for (auto& result : from_threads)
        threads.emplace_back([&] { result = preprocessing->prepare_sample(image, 12345); });
      for (auto& thread : threads) thread.join();
      for (const auto& result : from_threads) EXPECT_TRUE(result.equal(sample)) << "the same seed, other pixels";
      if (variant == orchestrate::PreprocessingVariant::eval)
        EXPECT_TRUE(preprocessing->prepare_sample(image, 999).equal(sample)) << "the eval variant used the seed";
      const auto batch = preprocessing->finish_batch(at::stack({sample, sample}));
      ASSERT_EQ(batch.scalar_type(), at::kFloat);
      ASSERT_EQ(batch.sizes(), (at::IntArrayRef{2, channels, shape.height, shape.width}));
      // Plain NCHW strides even for one channel, where a permuted view would
      // look channels-last and send convolutions down another kernel path.
      EXPECT_EQ(batch.stride(1), shape.height * shape.width);
      EXPECT_EQ(batch.stride(0), channels * shape.height * shape.width);
      EXPECT_TRUE(batch.isfinite().all().item<bool>());
      const auto transform = preprocessing->serving_transform();
      EXPECT_GT(transform.central_fraction, 0.0);
      EXPECT_LE(transform.central_fraction, 1.0);
      EXPECT_TRUE(transform.mean.size() == 1 || static_cast<std::int64_t>(transform.mean.size()) == channels);
      EXPECT_EQ(transform.mean.size(), transform.std.size());
    }
    EXPECT_EQ(shapes[0].height, shapes[1].height);
    EXPECT_EQ(shapes[0].width, shapes[1].width);
  }
}

INSTANTIATE_TEST_SUITE_P(All, PreprocessingConformance,
                         testing::ValuesIn(component_names(ComponentKind::preprocessing)), name_of_param);

// --- model ------------------------------------------------------------------

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
  const auto params = sample_params(entry.info.schema);
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
  const auto params = sample_params(entry.info.schema);
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
  const auto params = sample_params(entry.info.schema);
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
  const auto params = sample_params(entry.info.schema);
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

INSTANTIATE_TEST_SUITE_P(All, ModelConformance, testing::ValuesIn(component_names(ComponentKind::model)),
                         name_of_param);

// --- optimizer ---------------------------------------------------------------

// Two groups as the host forms them: weights with decay and an lr multiplier,
// and a bias without decay.
orchestrate::OptimizerContext two_groups(const at::Tensor& weights, const at::Tensor& bias) {
  orchestrate::OptimizerContext context;
  context.groups.push_back({"decay", {{"fc.weight", weights}}, 2.0, 0.01, false});
  context.groups.push_back({"no_decay", {{"fc.bias", bias}}, 1.0, 0.0, true});
  return context;
}

class OptimizerConformance : public testing::TestWithParam<std::string> {
 protected:
  // f(w, b) = 0.5 * sum(curvature * w^2) + 0.5 * b^2, minimum 0 at 0.
  at::Tensor loss() const {
    return (0.5 * at::tensor(std::vector<float>{1.0f, 4.0f, 0.5f}) * weights_ * weights_).sum() +
           0.5 * (bias_ * bias_).sum();
  }
  void take_steps(torch::optim::Optimizer& optimizer, int steps) const {
    for (int step = 0; step < steps; ++step) {
      optimizer.zero_grad();
      loss().backward();
      optimizer.step();
    }
  }
  std::unique_ptr<torch::optim::Optimizer> make() const {
    const auto& entry = registry().optimizers().get(GetParam());
    return entry.create(sample_params(entry.info.schema), two_groups(weights_, bias_));
  }
  at::Tensor weights_ = at::tensor(std::vector<float>{1.0f, -2.0f, 3.0f}).requires_grad_();
  at::Tensor bias_ = at::tensor(std::vector<float>{0.5f}).requires_grad_();
};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OptimizerConformance);

TEST_P(OptimizerConformance, DeclaresARealLr) {
  const auto* lr = registry().optimizers().get(GetParam()).info.schema.find("lr");
  ASSERT_NE(lr, nullptr) << "the host reads [optimizer] lr as the base lr the schedule scales";
  EXPECT_EQ(lr->type, orchestrate::ParamType::real);
}

TEST_P(OptimizerConformance, MakesOneParamGroupPerContextGroupWithTheScaledLr) {
  const auto optimizer = make();
  ASSERT_NE(optimizer, nullptr);
  ASSERT_EQ(optimizer->param_groups().size(), 2u);
  const double lr = sample_params(registry().optimizers().get(GetParam()).info.schema).real("lr");
  EXPECT_DOUBLE_EQ(optimizer->param_groups()[0].options().get_lr(), 2.0 * lr);
  EXPECT_DOUBLE_EQ(optimizer->param_groups()[1].options().get_lr(), lr);
  EXPECT_TRUE(optimizer->param_groups()[0].params()[0].is_same(weights_));
  EXPECT_TRUE(optimizer->param_groups()[1].params()[0].is_same(bias_));
}

TEST_P(OptimizerConformance, DefaultsReduceAQuadraticIn20Steps) {
  const auto optimizer = make();
  const double before = loss().item<double>();
  take_steps(*optimizer, 20);
  const double after = loss().item<double>();
  EXPECT_TRUE(std::isfinite(after));
  EXPECT_LT(after, before);
}

TEST_P(OptimizerConformance, FollowsTheLrSetOnEachParamGroup) {
  const auto optimizer = make();
  std::vector<double> base;
  for (auto& group : optimizer->param_groups()) base.push_back(group.options().get_lr());
  const auto weights = weights_.detach().clone();
  const auto bias = bias_.detach().clone();

  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  take_steps(*optimizer, 5);
  EXPECT_TRUE(weights_.detach().equal(weights)) << "lr 0 on every param group still moved the weights";
  EXPECT_TRUE(bias_.detach().equal(bias)) << "lr 0 on every param group still moved the bias";

  // Only the second group gets its lr back: only the bias may move.
  optimizer->param_groups()[1].options().set_lr(base[1]);
  take_steps(*optimizer, 1);
  EXPECT_TRUE(weights_.detach().equal(weights)) << "group 0 at lr 0 moved";
  EXPECT_FALSE(bias_.detach().equal(bias)) << "restoring group 1's lr did not move its parameter";
}

INSTANTIATE_TEST_SUITE_P(All, OptimizerConformance, testing::ValuesIn(component_names(ComponentKind::optimizer)),
                         name_of_param);

// --- optimizer_wrapper -------------------------------------------------------

class WrapperConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(WrapperConformance);

// Every wrapper, driven as the host drives it over a plain SGD, keeps the
// weights finite and moves them; with lr 0 it leaves them alone.
TEST_P(WrapperConformance, DrivenLikeTheHostItStepsAndHonoursLrZero) {
  const auto& entry = registry().optimizer_wrappers().get(GetParam());
  auto weights = at::tensor(std::vector<float>{1.0f, -2.0f, 3.0f}).requires_grad_();
  auto bias = at::tensor(std::vector<float>{0.5f}).requires_grad_();
  const auto context = two_groups(weights, bias);
  orchestrate::WrapperContext wrapper_context{context.groups, 0.1};
  const auto wrapper = entry.create(sample_params(entry.info.schema), wrapper_context);
  ASSERT_NE(wrapper, nullptr);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  for (const auto& group : context.groups)
    groups.emplace_back(orchestrate::tensors_of(group), std::make_unique<torch::optim::SGDOptions>(0.1));
  torch::optim::SGD base(groups, torch::optim::SGDOptions(0.1));
  std::map<std::string, at::Tensor> metrics;
  auto update = [&](double lr, std::int64_t index) {
    for (auto& group : base.param_groups()) group.options().set_lr(lr);
    base.zero_grad();
    ((weights * weights).sum() + (bias * bias).sum()).backward();
    orchestrate::UpdateView view{base, metrics, index};
    wrapper->before_step(view);
    base.step();
    wrapper->after_step(view);
  };
  const auto start = weights.detach().clone();
  update(0.0, 0);
  EXPECT_TRUE(weights.detach().equal(start)) << "lr 0 moved the weights";
  for (int i = 1; i <= 3; ++i) update(0.1, i);
  EXPECT_TRUE(weights.detach().isfinite().all().item<bool>());
  EXPECT_FALSE(weights.detach().equal(start));
  for (const auto& [name, value] : metrics) {
    EXPECT_EQ(name.rfind("train/", 0), 0u) << name << ": wrapper metrics are train/*";
    EXPECT_EQ(value.dim(), 0) << name << ": a metric is a 0-dim tensor";
  }
}

INSTANTIATE_TEST_SUITE_P(All, WrapperConformance,
                         testing::ValuesIn(component_names(ComponentKind::optimizer_wrapper)), name_of_param);

// --- lr_schedule ------------------------------------------------------------

class LrScheduleConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(LrScheduleConformance);

// What holds for every schedule, warm-ups included (step 0 need not be the base lr).
TEST_P(LrScheduleConformance, DefaultsGiveFiniteNonNegativeRatesPureInTheStep) {
  const auto& entry = registry().lr_schedules().get(GetParam());
  const orchestrate::ScheduleContext context{0.1, 100, 1000};
  const auto schedule = entry.create(sample_params(entry.info.schema), context);
  ASSERT_NE(schedule, nullptr);
  std::vector<double> rates;
  for (std::int64_t step = 0; step <= context.total_steps + 10; ++step) {
    rates.push_back(schedule->learning_rate(step));
    ASSERT_TRUE(std::isfinite(rates.back()) && rates.back() >= 0) << "step " << step << ": lr " << rates.back();
  }
  // Pure in the step: asking again, backwards, gives the same rates.
  for (std::int64_t step = context.total_steps + 10; step >= 0; --step)
    ASSERT_EQ(schedule->learning_rate(step), rates[static_cast<std::size_t>(step)]) << "step " << step;
}

INSTANTIATE_TEST_SUITE_P(All, LrScheduleConformance, testing::ValuesIn(component_names(ComponentKind::lr_schedule)),
                         name_of_param);

// --- gradient_compression ---------------------------------------------------

class CompressionConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CompressionConformance);

// The messages the host exchanges (gradient_compression.h's contract): one
// per parameter, float32 values, indices in range and distinct, as many
// values whatever the gradients; state() restores into a fresh compressor,
// which then sends exactly what the first one sends. A factory that returns
// no compressor asks for the dense all-reduce; there is nothing else to check.
TEST_P(CompressionConformance, MessagesFollowTheContractAndStateRoundTrips) {
  const auto& entry = registry().gradient_compressors().get(GetParam());
  auto weights = at::zeros({16, 8}).requires_grad_();
  auto bias = at::zeros({8}).requires_grad_();
  const orchestrate::CompressionContext context{two_groups(weights, bias).groups, 2, 10};
  const auto params = sample_params(entry.info.schema);
  auto first = entry.create(params, context);
  if (!first) return;  // "none": the dense all-reduce
  std::map<std::string, at::Tensor> metrics;
  auto compress = [&](orchestrate::GradientCompressor& compressor, std::int64_t update, std::uint64_t seed) {
    weights.mutable_grad() = at::randn({16, 8}).mul(static_cast<double>(seed) + 1.0);
    bias.mutable_grad() = at::randn({8}).mul(static_cast<double>(seed));
    return compressor.compress(orchestrate::CompressionStep{update, update / 10.0, metrics});
  };
  const std::vector<std::int64_t> numel{weights.numel(), bias.numel()};
  std::vector<std::int64_t> counts;
  for (std::int64_t update = 0; update < 4; ++update) {
    const auto messages = compress(*first, update, static_cast<std::uint64_t>(update));
    ASSERT_EQ(messages.size(), 2u) << "one message per parameter";
    for (std::size_t i = 0; i < messages.size(); ++i) {
      const auto& m = messages[i];
      ASSERT_TRUE(m.values.defined());
      EXPECT_EQ(m.values.scalar_type(), at::kFloat);
      EXPECT_EQ(m.values.dim(), 1);
      if (!m.indices.defined()) {
        EXPECT_EQ(m.values.numel(), numel[i]) << "values without indices are the whole gradient";
        continue;
      }
      EXPECT_TRUE(m.indices.scalar_type() == at::kLong || m.indices.scalar_type() == at::kInt);
      ASSERT_EQ(m.indices.numel(), m.values.numel());
      const auto positions = m.indices.to(at::kLong);
      EXPECT_GE(positions.min().item<std::int64_t>(), 0);
      EXPECT_LT(positions.max().item<std::int64_t>(), numel[i]);
      EXPECT_EQ(std::get<0>(at::_unique(positions)).numel(), positions.numel()) << "an index sent twice";
    }
    if (update == 1) counts = {messages[0].values.numel(), messages[1].values.numel()};
  }
  // Another rank, other gradients, the same update: the same message sizes.
  auto other = entry.create(params, context);
  compress(*other, 0, 7);
  const auto at_one = compress(*other, 1, 9);
  EXPECT_EQ(at_one[0].values.numel(), counts[0]);
  EXPECT_EQ(at_one[1].values.numel(), counts[1]);

  auto resumed = entry.create(params, context);
  std::map<std::string, at::Tensor> saved;
  for (const auto& [name, tensor] : first->state()) saved[name] = tensor.clone();
  resumed->load_state(saved);
  weights.mutable_grad() = at::randn({16, 8});
  bias.mutable_grad() = at::randn({8});
  const auto a = first->compress(orchestrate::CompressionStep{4, 0.4, metrics});
  const auto b = resumed->compress(orchestrate::CompressionStep{4, 0.4, metrics});
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(a[i].values.equal(b[i].values)) << "parameter " << i << " after load_state";
    EXPECT_EQ(a[i].indices.defined(), b[i].indices.defined());
    if (a[i].indices.defined()) EXPECT_TRUE(a[i].indices.equal(b[i].indices));
  }
  for (const auto& [name, value] : metrics) {
    EXPECT_EQ(name.rfind("train/", 0), 0u) << name << ": compressor metrics are train/*";
    EXPECT_EQ(value.dim(), 0) << name << ": a metric is a 0-dim tensor";
  }
}

INSTANTIATE_TEST_SUITE_P(All, CompressionConformance,
                         testing::ValuesIn(component_names(ComponentKind::gradient_compression)), name_of_param);

// --- hook ---------------------------------------------------------------------

class HookConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HookConformance);

// A model with weights and batch-norm buffers, for hooks to look at.
class SmallNet final : public orchestrate::Model {
 public:
  SmallNet() {
    conv_ = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3)));
    norm_ = register_module("norm", torch::nn::BatchNorm2d(4));
    fc_ = register_module("fc", torch::nn::Linear(4 * 6 * 6, 3));
  }
  at::Tensor forward(const at::Tensor& images) override {
    return fc_->forward(norm_->forward(conv_->forward(images)).relu().flatten(1));
  }

 private:
  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d norm_{nullptr};
  torch::nn::Linear fc_{nullptr};
};

// Records what a hook sends; stops are kept with the step they came at.
class RecordingSink final : public orchestrate::HookSink {
 public:
  std::int64_t step = 0;
  std::map<std::string, double> metrics;
  std::vector<std::int64_t> stops;
  void metric(const std::string& name, double value) override { metrics[name] = value; }
  void event(const std::string& kind, const std::string& message) override {
    EXPECT_FALSE(kind.empty());
    EXPECT_FALSE(message.empty());
  }
  void print(const std::string&) override {}
  void request_stop(const std::string& reason) override {
    EXPECT_FALSE(reason.empty()) << "a stop says why";
    stops.push_back(step);
  }
};

std::vector<at::Tensor> state_copy(orchestrate::Model& model) {
  std::vector<at::Tensor> out;
  for (const auto& p : model.parameters()) out.push_back(p.detach().clone());
  for (const auto& b : model.buffers()) out.push_back(b.detach().clone());
  return out;
}

// hook.h's contract, over a whole run of 12 updates on two ranks: the model
// is left exactly as it was (weights, buffers, train mode), and a stop is
// asked for at the same update on every rank.
TEST_P(HookConformance, LeavesTheModelAloneAndStopsAlikeOnEveryRank) {
  const auto& entry = registry().hooks().get(GetParam());
  const auto params = sample_params(entry.info.schema);
  const auto scratch = std::filesystem::path(testing::TempDir()) / ("hook-" + GetParam());
  std::filesystem::remove_all(scratch);
  SmallNet model;
  model.train();
  const auto before = state_copy(model);
  std::vector<std::vector<std::int64_t>> stops;
  for (int rank = 0; rank < 2; ++rank) {
    orchestrate::HookContext context{rank, 2, (scratch / "artifacts").string(), 1};
    auto hook = entry.create(params, context);
    ASSERT_TRUE(hook) << "the factory returned no hook";
    RecordingSink sink;
    hook->on_train_begin(orchestrate::TrainBegin{model, {1, 8, 8, 3}, 4, 0, 12, 6, c10::Device(c10::kCPU)}, sink);
    for (std::int64_t step = 1; step <= 12; ++step) {
      hook->before_update(step);
      at::matmul(at::rand({32, 32}), at::rand({32, 32}));  // the update's work, as a profiler would see it
      sink.step = step;
      const orchestrate::StepView view{step, 12, 1 + (step - 1) / 6, 0.1, at::scalar_tensor(2.5 - 0.1 * step), 8, 0.01,
                                       0.001};
      hook->after_update(view, sink);
    }
    hook->on_train_end(orchestrate::TrainEnd{12, orchestrate::TrainEndReason::finished}, sink);
    stops.push_back(sink.stops);
    for (const auto& [name, value] : sink.metrics) {
      EXPECT_FALSE(name.empty());
      EXPECT_TRUE(std::isfinite(value)) << name;
    }
  }
  EXPECT_EQ(stops[0], stops[1]) << "a stop must come at the same update on every rank";
  EXPECT_TRUE(model.is_training()) << "the hook left the model in eval mode";
  const auto after = state_copy(model);
  ASSERT_EQ(before.size(), after.size());
  for (std::size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(before[i].equal(after[i])) << "tensor " << i << " changed";
  std::filesystem::remove_all(scratch);
}

INSTANTIATE_TEST_SUITE_P(All, HookConformance, testing::ValuesIn(component_names(ComponentKind::hook)),
                         name_of_param);

}  // namespace

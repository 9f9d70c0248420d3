// The per-kind contracts of DESIGN.md ("each kind has a conformance test that
// every plugin of that kind passes"), checked for every component of every
// plugin in the build's plugin directory, loaded through the real host.
#include <ATen/ATen.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "orchestrate/dataset.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/model.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/registry.h"
#include "plugin_host.h"

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
    ASSERT_TRUE(spec.default_value.has_value()) << "the contracts below build every component from its defaults";
    EXPECT_EQ(spec.check(*spec.default_value), "");
  }
}

INSTANTIATE_TEST_SUITE_P(All, ComponentMetadata, testing::ValuesIn(all_components()),
                         [](const testing::TestParamInfo<ComponentRef>& info) {
                           return std::string(orchestrate::to_string(info.param.kind)) + "_" + info.param.name;
                         });

// --- dataset ----------------------------------------------------------------

class DatasetConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DatasetConformance);

void expect_batches_equal(const orchestrate::Batch& a, const orchestrate::Batch& b) {
  EXPECT_TRUE(a.images.equal(b.images));
  EXPECT_TRUE(a.labels.equal(b.labels));
}

TEST_P(DatasetConformance, DefaultsBuildBothSplitsWhoseBatchesMatchInfo) {
  const auto& entry = registry().datasets().get(GetParam());
  const auto params = orchestrate::default_params(entry.info.schema);
  for (const auto split : {orchestrate::DatasetSplit::train, orchestrate::DatasetSplit::test}) {
    SCOPED_TRACE(orchestrate::to_string(split));
    const auto dataset = entry.create(params, split);
    ASSERT_NE(dataset, nullptr);
    const std::int64_t size = dataset->size();
    ASSERT_GT(size, 0);
    const auto info = dataset->info();
    ASSERT_GT(info.channels, 0);
    ASSERT_GT(info.height, 0);
    ASSERT_GT(info.width, 0);
    ASSERT_GE(info.num_classes, 2);
    if (!info.class_names.empty()) EXPECT_EQ(info.class_names.size(), static_cast<std::size_t>(info.num_classes));

    const std::vector<std::int64_t> indices{0, size - 1, size / 2, 0};
    const auto batch = dataset->get_batch(indices);
    ASSERT_EQ(batch.images.scalar_type(), at::kFloat);
    ASSERT_EQ(batch.images.sizes(), (std::vector<std::int64_t>{4, info.channels, info.height, info.width}));
    EXPECT_TRUE(batch.images.isfinite().all().item<bool>());
    EXPECT_GE(batch.images.min().item<float>(), 0.0f);
    EXPECT_LE(batch.images.max().item<float>(), 1.0f);
    ASSERT_EQ(batch.labels.scalar_type(), at::kLong);
    ASSERT_EQ(batch.labels.sizes(), (std::vector<std::int64_t>{4}));
    EXPECT_GE(batch.labels.min().item<std::int64_t>(), 0);
    EXPECT_LT(batch.labels.max().item<std::int64_t>(), info.num_classes);
    EXPECT_TRUE(batch.images[0].equal(batch.images[3]));  // index 0 twice
    expect_batches_equal(dataset->get_batch(indices), batch);
  }
}

TEST_P(DatasetConformance, ConcurrentBatchesMatchSerialOnes) {
  const auto& entry = registry().datasets().get(GetParam());
  const auto dataset = entry.create(orchestrate::default_params(entry.info.schema), orchestrate::DatasetSplit::train);
  std::vector<std::int64_t> indices;
  for (std::int64_t i = 0; i < std::min<std::int64_t>(dataset->size(), 16); ++i) indices.push_back(i);
  const auto expected = dataset->get_batch(indices);
  std::vector<orchestrate::Batch> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) threads.emplace_back([&] { result = dataset->get_batch(indices); });
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) expect_batches_equal(result, expected);
}

INSTANTIATE_TEST_SUITE_P(All, DatasetConformance, testing::ValuesIn(component_names(ComponentKind::dataset)),
                         name_of_param);

// --- model ------------------------------------------------------------------

class ModelConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ModelConformance);

TEST_P(ModelConformance, ForwardGivesFiniteLogitsAndBackwardReachesEveryParameter) {
  const auto& entry = registry().models().get(GetParam());
  const auto params = orchestrate::default_params(entry.info.schema);
  for (const auto& input : std::vector<orchestrate::ModelInput>{{1, 28, 28, 10}, {3, 32, 32, 5}}) {
    SCOPED_TRACE(std::to_string(input.channels) + "x" + std::to_string(input.height) + "x" +
                 std::to_string(input.width) + ", " + std::to_string(input.num_classes) + " classes");
    torch::manual_seed(0);
    const auto model = entry.create(params, input);
    ASSERT_NE(model, nullptr);
    ASSERT_FALSE(model->parameters().empty());
    model->train();
    const auto logits = model->forward(at::rand({3, input.channels, input.height, input.width}));
    ASSERT_EQ(logits.sizes(), (std::vector<std::int64_t>{3, input.num_classes}));
    EXPECT_EQ(logits.scalar_type(), at::kFloat);
    EXPECT_TRUE(logits.isfinite().all().item<bool>());
    at::cross_entropy_loss(logits, at::tensor(std::vector<std::int64_t>{0, 1, 2})).backward();
    for (const auto& parameter : model->named_parameters()) {
      ASSERT_TRUE(parameter.value().grad().defined()) << parameter.key() << " got no gradient";
      EXPECT_TRUE(parameter.value().grad().isfinite().all().item<bool>()) << parameter.key();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, ModelConformance, testing::ValuesIn(component_names(ComponentKind::model)),
                         name_of_param);

// --- optimizer --------------------------------------------------------------

class OptimizerConformance : public testing::TestWithParam<std::string> {
 protected:
  // f(w) = 0.5 * sum(curvature * w^2), minimum 0 at w = 0.
  static at::Tensor quadratic(const at::Tensor& w) {
    return (0.5 * at::tensor(std::vector<float>{1.0f, 4.0f, 0.5f}) * w * w).sum();
  }
  static void take_steps(torch::optim::Optimizer& optimizer, const at::Tensor& w, int steps) {
    for (int step = 0; step < steps; ++step) {
      optimizer.zero_grad();
      quadratic(w).backward();
      optimizer.step();
    }
  }
  at::Tensor weights_ = at::tensor(std::vector<float>{1.0f, -2.0f, 3.0f}).requires_grad_();
};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OptimizerConformance);

TEST_P(OptimizerConformance, DefaultsReduceAQuadraticIn20Steps) {
  const auto& entry = registry().optimizers().get(GetParam());
  const auto optimizer = entry.create(orchestrate::default_params(entry.info.schema), {weights_});
  ASSERT_NE(optimizer, nullptr);
  const double before = quadratic(weights_).item<double>();
  take_steps(*optimizer, weights_, 20);
  const double after = quadratic(weights_).item<double>();
  EXPECT_TRUE(std::isfinite(after));
  EXPECT_LT(after, before);
}

TEST_P(OptimizerConformance, FollowsTheLrSetOnItsParamGroups) {
  const auto& entry = registry().optimizers().get(GetParam());
  const auto optimizer = entry.create(orchestrate::default_params(entry.info.schema), {weights_});
  ASSERT_NE(optimizer, nullptr);
  ASSERT_FALSE(optimizer->param_groups().empty());
  const double base_lr = optimizer->param_groups().front().options().get_lr();
  EXPECT_GT(base_lr, 0.0);
  const auto start = weights_.detach().clone();

  for (auto& group : optimizer->param_groups()) group.options().set_lr(0.0);
  take_steps(*optimizer, weights_, 5);
  EXPECT_TRUE(weights_.detach().equal(start)) << "lr 0 on every param group still moved the weights";

  for (auto& group : optimizer->param_groups()) group.options().set_lr(base_lr);
  take_steps(*optimizer, weights_, 1);
  EXPECT_FALSE(weights_.detach().equal(start)) << "restoring the base lr did not move the weights";
}

INSTANTIATE_TEST_SUITE_P(All, OptimizerConformance, testing::ValuesIn(component_names(ComponentKind::optimizer)),
                         name_of_param);

// --- lr_schedule ------------------------------------------------------------

class LrScheduleConformance : public testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(LrScheduleConformance);

TEST_P(LrScheduleConformance, DefaultsGiveFinitePositiveRatesStartingAtTheBaseLr) {
  const auto& entry = registry().lr_schedules().get(GetParam());
  const orchestrate::ScheduleContext context{0.1, 100, 1000};
  const auto schedule = entry.create(orchestrate::default_params(entry.info.schema), context);
  ASSERT_NE(schedule, nullptr);
  EXPECT_DOUBLE_EQ(schedule->learning_rate(0), context.base_lr);
  std::vector<double> rates;
  for (std::int64_t step = 0; step <= context.total_steps; ++step) {
    rates.push_back(schedule->learning_rate(step));
    ASSERT_TRUE(std::isfinite(rates.back()) && rates.back() > 0) << "step " << step << ": lr " << rates.back();
  }
  // Pure in the step: asking again, backwards, gives the same rates.
  for (std::int64_t step = context.total_steps; step >= 0; --step)
    ASSERT_EQ(schedule->learning_rate(step), rates[static_cast<std::size_t>(step)]) << "step " << step;
}

INSTANTIATE_TEST_SUITE_P(All, LrScheduleConformance, testing::ValuesIn(component_names(ComponentKind::lr_schedule)),
                         name_of_param);

}  // namespace

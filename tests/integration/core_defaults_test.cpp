// A core key's default lives in its spec alone (core_settings_tables.cpp).
// Each test changes one default, as the spec would, and sees a reader of a
// recipe that leaves the key out follow it: the bottleneck verdict, the
// reports (regressions' grouping, compare), the export commands' defaults,
// and a smoke run's rewrite. Under the built-in default the same reader gives
// the other answer, so none of them could have kept a default of its own.
#include <gtest/gtest.h>

#include <torch/nn/modules/linear.h>

#include <fstream>
#include <sstream>

#include "analysis/bottleneck_verdict.h"
#include "analysis/regressions.h"
#include "analysis/run_comparison.h"
#include "build_paths.h"
#include "engine/recipe/core_defaults.h"
#include "engine/setup/plugin_host.h"
#include "engine/setup/smoke_overrides.h"
#include "export/serving_export.h"
#include "orchestrate/model.h"
#include "orchestrate/model_presets.h"
#include "orchestrate/testing/scratch_dir.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

const CoreDefaults& builtin() { return CoreDefaults::builtin(); }

// The built-in prefetch_batches plus two: a default no reader could have written itself.
std::int64_t changed_prefetch() { return builtin().integer("run.prefetch_batches") + 2; }

CoreDefaults with_changed_prefetch() { return builtin().with("run.prefetch_batches", changed_prefetch()); }

// A finished run whose stored recipe has `params` and nothing else (a run
// recorded before the other keys existed), and that reads as input-bound
// with uneven steps: the verdict's prefetch_batches fix applies to it.
RunDetails add_run(RunStore& store, const std::string& name,
                   std::vector<std::pair<std::string, std::string>> params) {
  RunRecord record;
  record.name = name;
  record.host = "box";
  record.device = "cpu";
  record.world_size = 1;
  record.params = std::move(params);
  std::ostringstream recipe;
  recipe << "[run]\n";
  for (const auto& [key, value] : record.params) recipe << key.substr(key.find('.') + 1) << " = " << value << "\n";
  record.resolved_recipe = recipe.str();
  const auto id = store.begin_run(record);
  store.finish_run(id, RunStatus::finished);
  store.flush();
  for (const RunSummary& run : store.find_runs(RunFilter{}))
    if (run.id == id) return store.run_details(run);
  ADD_FAILURE() << "run " << id << " not found";
  return {};
}

ThroughputRow input_bound_row() {
  ThroughputRow row;
  row.steps = 40;
  row.warmup_steps = 1;
  row.median_step_s = 0.1;
  row.p95_step_s = 0.3;  // steps vary: the prefetch fix applies
  row.train_s = 4;
  row.data_wait_share = 0.6;
  row.compute_share = 0.4;
  return row;
}

std::string prefetch_fix(const Verdict& verdict) {
  for (const auto& fix : verdict.fixes)
    if (fix.rfind("[run] prefetch_batches", 0) == 0) return fix;
  return "";
}

TEST(CoreDefaults, TheVerdictReadsAKeyTheRunLacksAtItsSpecsDefault) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  const RunDetails old_run = add_run(store, "old", {{"run.batch_size", "32"}});
  const auto now = [&](const CoreDefaults& defaults) {
    const Verdict verdict = bottleneck_verdict(input_bound_row(), run_facts(store, old_run.summary, defaults));
    EXPECT_EQ(verdict.limit, "input");
    return prefetch_fix(verdict);
  };
  const std::int64_t was = builtin().integer("run.prefetch_batches");
  EXPECT_NE(now(builtin()).find("(now " + std::to_string(was) + ";"), std::string::npos) << now(builtin());
  const std::string changed = now(with_changed_prefetch());
  EXPECT_NE(changed.find("prefetch_batches = " + std::to_string(2 * changed_prefetch()) + " (now " +
                         std::to_string(changed_prefetch()) + ";"),
            std::string::npos)
      << changed;

  // A key the run did record is its own, whatever the default.
  const RunDetails recorded = add_run(store, "recorded", {{"run.prefetch_batches", "5"}});
  const Verdict verdict = bottleneck_verdict(input_bound_row(), run_facts(store, recorded.summary, with_changed_prefetch()));
  EXPECT_NE(prefetch_fix(verdict).find("(now 5;"), std::string::npos) << prefetch_fix(verdict);
}

TEST(CoreDefaults, RegressionsAndCompareCountAMissingKeyAsItsSpecsDefault) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  const RunDetails old_run = add_run(store, "old", {{"run.batch_size", "32"}});
  const RunDetails new_run = add_run(store, "new", {{"run.batch_size", "32"},
                                                   {"run.prefetch_batches", std::to_string(changed_prefetch())}});
  // Regressions compare runs of one recipe: with the changed default the old
  // run ran the new one's recipe; with the built-in one it did not.
  EXPECT_EQ(comparison_key(old_run, with_changed_prefetch()), comparison_key(new_run, with_changed_prefetch()));
  EXPECT_NE(comparison_key(old_run, builtin()), comparison_key(new_run, builtin()));

  const auto differs = [&](const CoreDefaults& defaults) {
    for (const auto& [key, cells] : recipe_differences({old_run, new_run}, defaults))
      if (key == "run.prefetch_batches") return true;
    return false;
  };
  EXPECT_FALSE(differs(with_changed_prefetch()));
  EXPECT_TRUE(differs(builtin()));
}

TEST(CoreDefaults, TheExportCommandsTakeTheirDefaultsFromTheSpec) {
  const std::int64_t top_k = builtin().integer("export.top_k") + 3;
  const std::int64_t batch = builtin().integer("export.max_batch_size") * 2;
  const ExportSettings changed =
      export_defaults(builtin().with("export.top_k", top_k).with("export.max_batch_size", batch));
  EXPECT_EQ(changed.top_k, top_k);
  EXPECT_EQ(changed.max_batch_size, batch);
  EXPECT_EQ(export_defaults().top_k, builtin().integer("export.top_k"));
}

// A linear classifier, registered in process.
class Linear : public Model {
 public:
  explicit Linear(const ModelInput& input)
      : fc_(register_module("fc", torch::nn::Linear(input.channels * input.height * input.width, input.num_classes))) {}
  at::Tensor forward(const at::Tensor& images) override { return fc_->forward(images.flatten(1)); }

 private:
  torch::nn::Linear fc_{nullptr};
};

const std::string kSmokeRecipe = R"(schema_version = 1
[data]
plugin = "mock"
channels = 1
height = 8
width = 8
num_classes = 10
[model]
plugin = "linear"
[optimizer]
plugin = "sgd"
lr = 0.1
[checkpoint]
init_from = "pretrained.safetensors"
)";

// The bytes of the initial weights a smoke run writes to stand in for
// init_from: the model built under the recipe's seed.
std::string stand_in_weights(const Registry& registry, const std::string& recipe, const CoreDefaults& defaults,
                             const std::string& scratch) {
  toml::table root = parse_toml(recipe, "smoke.toml");
  SmokeOverrides smoke(registry, scratch, defaults);
  smoke.apply(root);
  const std::string file = root["checkpoint"]["init_from"].value_or(std::string());
  std::ifstream in(file, std::ios::binary);
  EXPECT_TRUE(in) << "no stand-in weights at \"" << file << "\"";
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(CoreDefaults, ASmokeRunSeedsItsStandInWeightsWithTheSpecsDefault) {
  Registry registry;
  load_plugins(registry, {orchestrate::build_paths::kTestPluginDir});
  registry.models().add(
      "linear", "test model", {}, [](const Params&, const ModelInput& input) { return std::make_shared<Linear>(input); },
      ModelMeta{"fc.*", 8, {}, no_preprocessing()});
  ScratchDir dir;
  const std::int64_t seed = builtin().integer("run.seed") + 1;
  const std::string changed_default =
      stand_in_weights(registry, kSmokeRecipe, builtin().with("run.seed", seed), dir.file("changed"));
  const std::string given = stand_in_weights(registry, kSmokeRecipe + "[run]\nseed = " + std::to_string(seed) + "\n",
                                             builtin(), dir.file("given"));
  const std::string built_in = stand_in_weights(registry, kSmokeRecipe, builtin(), dir.file("builtin"));
  ASSERT_FALSE(changed_default.empty());
  // Compared as bytes, not printed: the changed default is the seed the recipe left out.
  EXPECT_TRUE(changed_default == given) << "the stand-in weights differ from those of seed = " << seed;
  EXPECT_FALSE(changed_default == built_in) << "the stand-in weights ignore the changed default";
}

TEST(CoreDefaults, AChangeOfTypeOrAnUnknownKeyIsRefused) {
  EXPECT_THROW(builtin().with("run.prefetch_batches", std::string("six")), Error);
  EXPECT_THROW(builtin().with("run.no_such_key", std::int64_t{1}), Error);
  EXPECT_EQ(builtin().string("schedule.plugin"), "fixed");
}

}  // namespace
}  // namespace orchestrate::testing

// Checkpoints, exact resume and transfer learning, in process: the trainer is
// stopped at exact micro-batches (TrainOptions::stop_after_micro_batches acts
// as a SIGINT there), resumed, and its final weights compared bit for bit
// with an uninterrupted run's. Synthetic `mock` data and LeNet keep it fast.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "build_paths.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/resume.h"
#include "checkpoint/safetensors.h"
#include "engine/recipe/recipe.h"
#include "engine/setup/plugin_host.h"
#include "engine/train/trainer.h"
#include "orchestrate/error.h"
#include "orchestrate/testing/scratch_dir.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

// 512 images in micro-batches of 16, two per update: 16 updates per epoch, 32 in all.
const std::string kRecipe = R"(schema_version = 1
[run]
name = "resume"
batch_size = 16
epochs = 2
log_every = 4
threads = 1
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 512
test_size = 64
[model]
plugin = "lenet"
[optimizer]
plugin = "momentum"
lr = 0.05
weight_decay = 0.0005
[[optimizer.wrappers]]
plugin = "batch_gradients"
num_batches = 2
[schedule]
plugin = "cosine"
warmup = "linear"
warmup_length = 3
[checkpoint]
every_steps = 5
keep_max = 0
)";

class CheckpointResume : public ::testing::Test {
 protected:
  void SetUp() override { load_plugins(registry_, {orchestrate::build_paths::kTestPluginDir}); }

  Recipe recipe(const std::string& text, const std::vector<std::string>& sets = {}) {
    const std::string path = dir_.write("recipe_" + std::to_string(count_++) + ".toml", text);
    return load_recipe(path, parse_overrides(sets), registry_);
  }

  TrainOutcome train_with(const Recipe& r, RunStore& store, std::int64_t stop_after = 0, std::string resume = "") {
    TrainOptions options;
    options.stop_after_micro_batches = stop_after;
    options.resume_from = std::move(resume);
    return train(r, registry_, store, options);
  }

  static NamedTensors weights_of(const std::string& checkpoint) {
    return read_safetensors((fs::path(checkpoint) / kWeightsFile).string());
  }

  static void expect_identical(const NamedTensors& a, const NamedTensors& b) {
    ASSERT_EQ(a.tensors.size(), b.tensors.size());
    for (std::size_t i = 0; i < a.tensors.size(); ++i) {
      EXPECT_EQ(a.tensors[i].first, b.tensors[i].first);
      EXPECT_TRUE(at::equal(a.tensors[i].second, b.tensors[i].second)) << a.tensors[i].first << " differs";
    }
  }

  // The uninterrupted run's final weights, trained once per test.
  NamedTensors baseline(const Recipe& r) {
    RunStore store(dir_.file("baseline.db"));
    const auto outcome = train_with(r, store);
    EXPECT_EQ(outcome.status, RunStatus::finished);
    return weights_of(outcome.checkpoint);
  }

  // Stopped after micro-batch `stop_at`, then resumed to the end in `store`:
  // the final weights.
  TrainOutcome stopped_and_resumed(const Recipe& r, RunStore& store, std::int64_t stop_at) {
    const auto stopped = train_with(r, store, stop_at);
    EXPECT_EQ(stopped.status, RunStatus::interrupted);
    const auto resumed = train_with(r, store, 0, stopped.checkpoint);
    EXPECT_EQ(resumed.status, RunStatus::finished);
    return resumed;
  }

  Registry registry_;
  ScratchDir dir_;
  int count_ = 0;
};

TEST_F(CheckpointResume, StopsAnywhereAndResumesToTheSameWeightsBitForBit) {
  const Recipe r = recipe(kRecipe);
  const NamedTensors expected = baseline(r);
  // Micro-batch 5: mid-epoch, half-way through update 3's accumulation.
  // 8: between updates. 37: second epoch, mid-accumulation again.
  for (std::int64_t stop_at : {5, 8, 37}) {
    SCOPED_TRACE("stopped after micro-batch " + std::to_string(stop_at));
    RunStore store(dir_.file("stop" + std::to_string(stop_at) + ".db"));
    const auto stopped = train_with(r, store, stop_at);
    ASSERT_EQ(stopped.status, RunStatus::interrupted);
    ASSERT_FALSE(stopped.checkpoint.empty());
    const CheckpointMeta meta = read_checkpoint_meta(stopped.checkpoint);
    EXPECT_EQ(meta.step, stop_at / 2);
    EXPECT_EQ(meta.micro_batch, stop_at % 2);
    EXPECT_EQ(meta.reason, "signal");
    EXPECT_EQ(store.find_run(std::to_string(stopped.run_id))->status, "interrupted");

    const std::string target = resolve_resume_target("", r, store);
    EXPECT_EQ(target, stopped.checkpoint);
    const auto resumed = train_with(r, store, 0, target);
    ASSERT_EQ(resumed.status, RunStatus::finished);
    EXPECT_EQ(resumed.run_id, stopped.run_id);
    expect_identical(weights_of(resumed.checkpoint), expected);

    // One step row per update, none missing, none twice.
    const auto steps = store.step_timings(resumed.run_id);
    ASSERT_EQ(steps.size(), 32u);
    for (std::size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].step, static_cast<std::int64_t>(i + 1));
    bool resume_event = false;
    for (const auto& e : store.events(resumed.run_id)) resume_event = resume_event || e.kind == "resume";
    EXPECT_TRUE(resume_event);
  }
}

// [run] data_on_device: the split kept as one tensor serves the resumed run
// from the batch it stopped at, mid-accumulation in the second epoch, and
// both runs end on the pipeline's weights.
TEST_F(CheckpointResume, ASplitKeptOnTheDeviceResumesToThePipelinesWeights) {
  const NamedTensors piped = baseline(recipe(kRecipe));
  const Recipe kept = recipe(kRecipe, {"run.data_on_device=\"on\""});
  RunStore store(dir_.file("kept.db"));
  const auto resumed = stopped_and_resumed(kept, store, 37);
  expect_identical(weights_of(resumed.checkpoint), piped);
  bool kept_on_device = false;
  for (const auto& e : store.events(resumed.run_id)) kept_on_device = kept_on_device || e.kind == "data_on_device";
  EXPECT_TRUE(kept_on_device);
}

TEST_F(CheckpointResume, AdamStateAndTheDynamicLossScaleResumeExactly) {
  // Adam's moments and the fp16 scaler's scale and growth tracker (growth
  // every 3 clean updates, so the scale moves during the run) must survive.
  const Recipe r = recipe(kRecipe, {"optimizer.plugin=\"adam\"", "optimizer.lr=0.002", "precision.mode=\"fp16\"",
                                    "precision.loss_scale=256.0", "precision.growth_interval=3"});
  const NamedTensors expected = baseline(r);
  RunStore store(dir_.file("runs.db"));
  expect_identical(weights_of(stopped_and_resumed(r, store, 23).checkpoint), expected);
}

TEST_F(CheckpointResume, ResumesAnIntervalCheckpointOfAFinishedRunTwice) {
  const Recipe r = recipe(kRecipe);
  RunStore store(dir_.file("runs.db"));
  const auto first = train_with(r, store);
  const NamedTensors expected = weights_of(first.checkpoint);
  // every_steps = 5: step-00000010 exists; continuing from it must retrace the run.
  const std::string step10 = (fs::path(first.checkpoint).parent_path() / checkpoint_name(10, 0)).string();
  ASSERT_TRUE(is_checkpoint(step10));
  const auto again = train_with(r, store, 9, step10);  // stop again mid-way
  ASSERT_EQ(again.status, RunStatus::interrupted);
  const auto last = train_with(r, store, 0, resolve_resume_target(std::to_string(first.run_id), r, store));
  ASSERT_EQ(last.status, RunStatus::finished);
  expect_identical(weights_of(last.checkpoint), expected);
}

TEST_F(CheckpointResume, RefusesATrajectoryChangeAndRecordsAnAllowedOne) {
  RunStore store(dir_.file("runs.db"));
  const auto stopped = train_with(recipe(kRecipe), store, 7);
  ASSERT_EQ(stopped.status, RunStatus::interrupted);
  try {
    train_with(recipe(kRecipe, {"optimizer.lr=0.1"}), store, 0, stopped.checkpoint);
    FAIL() << "a changed lr must refuse the resume";
  } catch (const RecipeError& e) {
    EXPECT_NE(std::string(e.what()).find("optimizer.lr: 0.05 -> 0.1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("init_from"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store.find_run(std::to_string(stopped.run_id))->status, "interrupted");  // untouched

  const auto resumed = train_with(recipe(kRecipe, {"run.log_every=8", "eval.every_epochs=2"}), store, 0,
                                  stopped.checkpoint);
  EXPECT_EQ(resumed.status, RunStatus::finished);
  std::string message;
  for (const auto& e : store.events(resumed.run_id))
    if (e.kind == "resume") message = e.message;
  EXPECT_NE(message.find("run.log_every: 4 -> 8"), std::string::npos) << message;
  EXPECT_NE(message.find("eval.every_epochs: 1 -> 2"), std::string::npos) << message;
}

// A plugin's own key may change on resume when its spec says so
// (ParamSpec::safe_on_resume): here the mock dataset, registered again with
// one more key that its spec calls safe; another key still refuses.
TEST_F(CheckpointResume, APluginKeyItsSpecCallsSafeMayChangeAndTheOthersMayNot) {
  const auto& mock = registry_.datasets().get("mock");
  ParamSchema schema = mock.info.schema;
  schema.add(string_param("note", "", "a label that changes nothing").safe_on_resume());
  registry_.datasets().add("noted_mock", "mock, with a note", std::move(schema), mock.create, mock.meta);
  std::string text = kRecipe;
  text.replace(text.find("plugin = \"mock\""), 15, "plugin = \"noted_mock\"");
  RunStore store(dir_.file("runs.db"));
  const auto stopped = train_with(recipe(text), store, 7);
  ASSERT_EQ(stopped.status, RunStatus::interrupted);
  EXPECT_THROW(train_with(recipe(text, {"data.train_size=256"}), store, 0, stopped.checkpoint), RecipeError);
  const auto resumed = train_with(recipe(text, {"data.note=\"second try\""}), store, 0, stopped.checkpoint);
  EXPECT_EQ(resumed.status, RunStatus::finished);
  std::string message;
  for (const auto& e : store.events(resumed.run_id))
    if (e.kind == "resume") message = e.message;
  EXPECT_NE(message.find("data.note:  -> second try"), std::string::npos) << message;
}

TEST_F(CheckpointResume, KeepsTheNewestKeepMaxCheckpoints) {
  RunStore store(dir_.file("runs.db"));
  const auto outcome = train_with(recipe(kRecipe, {"checkpoint.every_steps=2", "checkpoint.keep_max=2"}), store);
  const auto on_disk = checkpoints_in(fs::path(outcome.checkpoint).parent_path().string());
  ASSERT_EQ(on_disk.size(), 2u);
  EXPECT_EQ(fs::path(on_disk.back()).filename(), checkpoint_name(32, 0));
  EXPECT_EQ(fs::path(on_disk.front()).filename(), checkpoint_name(30, 0));
  const auto rows = store.checkpoints(outcome.run_id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.back().reason, "end");
  EXPECT_GT(rows.back().bytes, 0);
  EXPECT_TRUE(rows.back().metrics.count("eval/top1"));
}

TEST_F(CheckpointResume, RefusesADamagedCheckpointAndLeavesTheRunAsItWas) {
  RunStore store(dir_.file("runs.db"));
  const auto stopped = train_with(recipe(kRecipe), store, 6);
  const auto weights = fs::path(stopped.checkpoint) / kWeightsFile;
  fs::resize_file(weights, fs::file_size(weights) / 2);
  try {
    train_with(recipe(kRecipe), store, 0, stopped.checkpoint);
    FAIL() << "a truncated checkpoint must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.safetensors"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store.find_run(std::to_string(stopped.run_id))->status, "interrupted");
}

TEST_F(CheckpointResume, AnUnwritableCheckpointDirectoryFailsBeforeTheRunIsRecorded) {
  RunStore store(dir_.file("runs.db"));
  const std::string file = dir_.write("not_a_directory", "x");
  try {
    train_with(recipe(kRecipe, {"checkpoint.dir=\"" + file + "/checkpoints\""}), store);
    FAIL() << "an unwritable checkpoint directory must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[checkpoint] dir"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store.list_runs().empty());
}

TEST_F(CheckpointResume, FineTunesWithTheHeadExcludedAndTheConvolutionsFrozen) {
  RunStore store(dir_.file("runs.db"));
  const auto base = train_with(recipe(kRecipe), store);
  const NamedTensors source = weights_of(base.checkpoint);

  const Recipe tune = recipe(kRecipe, {"data.num_classes=4", "checkpoint.init_from=\"" + base.checkpoint + "\"",
                                       "checkpoint.exclude=[\"@logits\"]", "checkpoint.frozen=[\"conv*\"]",
                                       "run.epochs=1"});
  const auto tuned = train_with(tune, store);
  ASSERT_EQ(tuned.status, RunStatus::finished);
  const NamedTensors after = weights_of(tuned.checkpoint);
  std::map<std::string, at::Tensor> before;
  for (const auto& [name, tensor] : source.tensors) before[name] = tensor;
  for (const auto& [name, tensor] : after.tensors) {
    if (name.starts_with("conv")) EXPECT_TRUE(at::equal(tensor, before[name])) << name << " is frozen";
    if (name.starts_with("fc1")) EXPECT_FALSE(at::equal(tensor, before[name])) << name << " trains";
  }
  std::map<std::string, std::string> action;
  for (const auto& t : store.tensors(tuned.run_id)) action[t.name + "/" + t.action] = t.shape;
  EXPECT_TRUE(action.count("fc3.weight/excluded"));
  EXPECT_TRUE(action.count("fc3.bias/excluded"));
  EXPECT_TRUE(action.count("fc1.weight/loaded"));
  EXPECT_TRUE(action.count("conv1.weight/loaded"));
  EXPECT_TRUE(action.count("conv1.weight/frozen"));
  EXPECT_TRUE(action.count("conv2.bias/frozen"));
  EXPECT_FALSE(action.count("fc1.weight/frozen"));
}

TEST_F(CheckpointResume, AShapeMismatchNamesTheTensorAndBothShapesAndFailsTheRun) {
  RunStore base_store(dir_.file("base.db"));
  const auto base = train_with(recipe(kRecipe, {"run.epochs=1"}), base_store);
  RunStore store(dir_.file("runs.db"));
  try {
    train_with(recipe(kRecipe, {"data.num_classes=4", "checkpoint.init_from=\"" + base.checkpoint + "\""}), store);
    FAIL() << "a head of another shape must be refused";
  } catch (const RecipeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'fc3.weight' (file [10, 84], model [4, 84])"), std::string::npos) << what;
    EXPECT_NE(what.find("@logits"), std::string::npos) << what;
  }
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "failed");
  EXPECT_NE(runs[0].error.find("fc3.weight"), std::string::npos) << runs[0].error;

  // strict = false: loaded anyway, the mismatch recorded.
  const auto loose = train_with(recipe(kRecipe, {"data.num_classes=4", "run.epochs=1", "checkpoint.strict=false",
                                                 "checkpoint.init_from=\"" + base.checkpoint + "\""}),
                                store);
  bool recorded = false;
  for (const auto& t : store.tensors(loose.run_id)) recorded = recorded || (t.name == "fc3.weight" && t.action == "mismatched");
  EXPECT_TRUE(recorded);
}

}  // namespace
}  // namespace orchestrate::testing

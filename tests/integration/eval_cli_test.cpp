// `orchestrate eval` as a user meets it: evaluating a run's end checkpoint
// reproduces that run's final evaluation exactly and records an eval run
// linked to it; a run id or a weights file work too; and every refusal is
// one line with its exit code and leaves no run behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "command_runner.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

// 512 images in batches of 32: 16 updates per epoch, 32 in all. 200 test
// images in evaluation batches of 64: the last batch is a partial one.
const std::string kRecipe = R"(schema_version = 1
[run]
name = "eval_cli"
batch_size = 32
epochs = 2
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 512
test_size = 200
[model]
plugin = "lenet"
[optimizer]
plugin = "momentum"
lr = 0.05
[eval]
batch_size = 64
[checkpoint]
at_end = true
[log]
flush_secs = 0.1
)";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Trains kRecipe into `db` and returns the run's end checkpoint.
std::string train(const std::string& recipe, const std::string& db) {
  const auto trained = run_orchestrate("run " + recipe + " --db " + db + " --quiet");
  EXPECT_EQ(trained.exit_code, 0) << trained.output;
  const auto checkpoints = RunStore(db).checkpoints(1);
  EXPECT_FALSE(checkpoints.empty());
  if (checkpoints.empty()) return "";
  EXPECT_EQ(checkpoints.back().reason, "end");
  EXPECT_EQ(checkpoints.back().step, 32);
  return checkpoints.back().path;
}

std::string event_of(const RunStore& store, std::int64_t run_id, const std::string& kind) {
  for (const auto& event : store.events(run_id))
    if (event.kind == kind) return event.message;
  return "";
}

TEST(EvalCli, EvalOfTheEndCheckpointReproducesTheRunsFinalEvaluation) {
  ScratchDir dir;
  const auto recipe = dir.write("eval.toml", kRecipe);
  const auto db = dir.file("runs.db");
  const std::string checkpoint = train(recipe, db);
  ASSERT_FALSE(checkpoint.empty());

  const auto evaluated = run_orchestrate("eval " + recipe + " --checkpoint " + checkpoint + " --db " + db);
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.output;
  EXPECT_TRUE(contains(evaluated.output, "eval run 2 'eval_cli_eval': checkpoint " + checkpoint +
                                             " of run 1 at step 32 (epoch 2)"))
      << evaluated.output;
  EXPECT_TRUE(contains(evaluated.output, "(200 images, ")) << evaluated.output;
  EXPECT_TRUE(contains(evaluated.output, " images/s)")) << evaluated.output;

  RunStore store(db);
  const auto trained = store.find_run("1");
  const auto eval = store.find_run("2");
  ASSERT_TRUE(trained && eval);
  EXPECT_EQ(trained->kind, "train");
  EXPECT_EQ(eval->kind, "eval");
  EXPECT_EQ(eval->source_run_id, 1);
  EXPECT_EQ(eval->status, "finished");
  // The same weights on the same batches with the same threads and
  // precision: bit for bit the training run's final evaluation.
  for (const char* metric : {"eval/top1", "eval/top5", "eval/loss"}) {
    ASSERT_TRUE(trained->final_metrics.count(metric)) << metric;
    ASSERT_TRUE(eval->final_metrics.count(metric)) << metric;
    EXPECT_EQ(eval->final_metrics.at(metric), trained->final_metrics.at(metric)) << metric;
  }
  EXPECT_GT(eval->final_metrics.at("eval/images_per_s"), 0.0);
  EXPECT_EQ(event_of(store, 2, "evaluates"), "checkpoint " + checkpoint + " of run 1 at step 32 (epoch 2)");
  EXPECT_TRUE(contains(event_of(store, 2, "eval"), "eval at step 32: top1 ")) << event_of(store, 2, "eval");

  // A run id stands for its newest checkpoint: the same one here.
  const auto by_run = run_orchestrate("eval " + recipe + " --checkpoint 1 --db " + db);
  ASSERT_EQ(by_run.exit_code, 0) << by_run.output;
  const auto eval_by_run = store.find_run("3");
  ASSERT_TRUE(eval_by_run);
  EXPECT_EQ(eval_by_run->source_run_id, 1);
  EXPECT_EQ(eval_by_run->final_metrics.at("eval/top1"), trained->final_metrics.at("eval/top1"));
  EXPECT_EQ(eval_by_run->final_metrics.at("eval/loss"), trained->final_metrics.at("eval/loss"));

  // A bare weights file is the same weights, with no training run to link.
  const auto weights = dir.file("lenet.safetensors");
  ASSERT_EQ(run_orchestrate("weights export 1 " + weights + " --db " + db).exit_code, 0);
  const auto by_file = run_orchestrate("eval " + recipe + " --checkpoint " + weights + " --db " + db);
  ASSERT_EQ(by_file.exit_code, 0) << by_file.output;
  const auto eval_of_file = store.find_run("4");
  ASSERT_TRUE(eval_of_file);
  EXPECT_EQ(eval_of_file->kind, "eval");
  EXPECT_EQ(eval_of_file->source_run_id, 0);
  EXPECT_EQ(eval_of_file->final_metrics.at("eval/top1"), trained->final_metrics.at("eval/top1"));
  EXPECT_EQ(eval_of_file->final_metrics.at("eval/loss"), trained->final_metrics.at("eval/loss"));
  EXPECT_EQ(event_of(store, 4, "evaluates"), "weights file " + weights + " (no training run)");

  // Other evaluation batches sum the loss in another order: equal only to
  // rounding. Top-1 counts hits, which batching does not change. Its
  // progress (on stderr) shows from the first of its 29 batches.
  const auto rebatched = run_orchestrate("eval " + recipe + " --checkpoint 1 --db " + db +
                                         " --set eval.batch_size=7 --set 'log.progress=\"always\"'");
  ASSERT_EQ(rebatched.exit_code, 0) << rebatched.output;
  EXPECT_TRUE(contains(rebatched.output, "\r\033[Keval  batch 1/29  ")) << rebatched.output;
  const auto eval_rebatched = store.find_run("5");
  ASSERT_TRUE(eval_rebatched);
  EXPECT_EQ(eval_rebatched->final_metrics.at("eval/top1"), trained->final_metrics.at("eval/top1"));
  EXPECT_NEAR(eval_rebatched->final_metrics.at("eval/loss"), trained->final_metrics.at("eval/loss"), 1e-5);

  // The names keep finding the training run, and `runs` shows what each run is.
  EXPECT_EQ(store.find_run("eval_cli")->id, 1);
  const auto runs = run_orchestrate("runs --db " + db + " --format csv");
  ASSERT_EQ(runs.exit_code, 0) << runs.output;
  EXPECT_TRUE(contains(runs.output, "id,name,kind,source_run,status,")) << runs.output;
  EXPECT_TRUE(contains(runs.output, "\n2,eval_cli_eval,eval,1,finished,")) << runs.output;
  EXPECT_TRUE(contains(runs.output, "\n4,eval_cli_eval,eval,,finished,")) << runs.output;
  EXPECT_TRUE(contains(runs.output, "\n1,eval_cli,train,,finished,")) << runs.output;
  const auto people = run_orchestrate("runs --db " + db);
  EXPECT_TRUE(contains(people.output, "eval of 1")) << people.output;
}

// A training run's evaluation takes over its progress line from its first
// batch (4 of 64 images for the 200) until its result's line.
TEST(EvalCli, ATrainingRunsEvaluationShowsItsProgress) {
  ScratchDir dir;
  const auto recipe = dir.write("eval.toml", kRecipe);
  const auto trained = run_orchestrate("run " + recipe + " --db " + dir.file("runs.db") +
                                       " --set run.epochs=1 --set 'log.progress=\"always\"'");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const auto progress = trained.output.find("\r\033[Keval after epoch 1  batch 1/4  ");
  const auto result = trained.output.find("\r\033[Keval after epoch 1 (step 16): top1 ");
  EXPECT_NE(progress, std::string::npos) << trained.output;
  EXPECT_NE(result, std::string::npos) << trained.output;
  EXPECT_LT(progress, result) << trained.output;
}

TEST(EvalCli, RefusalsAreOneLineWithTheirExitCodeAndRecordNoRun) {
  ScratchDir dir;
  const auto recipe = dir.write("eval.toml", kRecipe);
  const auto db = dir.file("runs.db");
  const std::string checkpoint = train(recipe, db);
  ASSERT_FALSE(checkpoint.empty());
  // A run that saved no checkpoint.
  ASSERT_EQ(run_orchestrate("run " + recipe + " --db " + db +
                            " --quiet --set run.epochs=1 --set checkpoint.at_end=false --set checkpoint.every_epochs=0")
                .exit_code,
            0);
  const std::size_t runs_before = RunStore(db).list_runs().size();
  ASSERT_EQ(runs_before, 2u);

  struct Refusal {
    std::string arguments, message;
    int exit_code;
  };
  const std::vector<Refusal> refusals = {
      {"--checkpoint " + dir.file("nowhere/step-00000032"),
       "nowhere/step-00000032: no such checkpoint directory or .safetensors file, and no run with that id or name in " +
           db,
       2},
      {"--checkpoint 2", "--checkpoint 2: run 2 has no checkpoint on disk to evaluate", 2},
      {"--checkpoint 99", "--checkpoint 99: no such checkpoint directory or .safetensors file", 2},
      {"--checkpoint " + dir.path().string(), ": not a checkpoint directory (no checkpoint.json)", 2},
      {"--checkpoint " + recipe, "is neither a checkpoint directory nor a .safetensors file", 2},
      {"--checkpoint " + checkpoint + " --set data.num_classes=5",
       "its weights do not fit the recipe's model lenet: shape mismatch: 'fc3.weight' (file [10, 84], model [5, 84]), "
       "'fc3.bias' (file [10], model [5])",
       2},
      {"--checkpoint " + checkpoint + " --set model.plugin=convnet",
       "its weights do not fit the recipe's model convnet (they were saved by model lenet): shape mismatch: "
       "'conv1.weight' (file [6, 1, 5, 5], model [32, 1, 3, 3]), ",
       2},
      {"--checkpoint " + checkpoint + " --set eval.enabled=false",
       "[eval] enabled = false: the recipe has no evaluation to run", 2},
      {"", "eval: missing --checkpoint, the weights: ", 2},
  };
  for (const auto& refusal : refusals) {
    const auto result = run_orchestrate("eval " + recipe + " " + refusal.arguments + " --db " + db);
    EXPECT_EQ(result.exit_code, refusal.exit_code) << refusal.arguments << "\n" << result.output;
    EXPECT_TRUE(contains(result.output, refusal.message)) << refusal.arguments << "\n" << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
    EXPECT_TRUE(result.output.starts_with("orchestrate: error: ")) << result.output;
  }
  EXPECT_EQ(RunStore(db).list_runs().size(), runs_before) << "a refused evaluation records no run";

  // Without a run store, a refusal does not create one either.
  const auto no_store = dir.file("none/runs.db");
  const auto refused = run_orchestrate("eval " + recipe + " --checkpoint 1 --db " + no_store);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_FALSE(fs::exists(no_store));
  // ... and an evaluation that is not refused makes one, its run unlinked.
  const auto unlinked = run_orchestrate("eval " + recipe + " --checkpoint " + checkpoint + " --db " + no_store);
  ASSERT_EQ(unlinked.exit_code, 0) << unlinked.output;
  EXPECT_TRUE(contains(unlinked.output, ", not linked to a run: no run store records it as run 1's"))
      << unlinked.output;
  EXPECT_EQ(RunStore(no_store).find_run("1")->source_run_id, 0);
}

// Fashion-MNIST's first test image is an ankle boot (class 9): with one
// image and only classes 0 and 1 kept, the test split is empty.
TEST(EvalCli, AnEmptyTestSplitIsARecipeError) {
  ASSERT_TRUE(fs::exists("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz"))
      << "Debian's dataset-fashion-mnist is missing: run scripts/setup (apt-get install dataset-fashion-mnist)";
  ScratchDir dir;
  const auto db = dir.file("runs.db");
  const std::string checkpoint = train(dir.write("eval.toml", kRecipe), db);
  ASSERT_FALSE(checkpoint.empty());
  const auto recipe = dir.write("empty.toml", R"(schema_version = 1
[data]
plugin = "fashion_mnist"
limit = 1
classes = [0, 1]
[model]
plugin = "lenet"
[optimizer]
plugin = "sgd"
lr = 0.1
)");
  const auto result = run_orchestrate("eval " + recipe + " --checkpoint " + checkpoint + " --db " + db);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(contains(result.output, "[data] fashion_mnist has an empty test split: nothing to evaluate"))
      << result.output;
  EXPECT_EQ(RunStore(db).list_runs().size(), 1u);
}

}  // namespace
}  // namespace orchestrate::testing

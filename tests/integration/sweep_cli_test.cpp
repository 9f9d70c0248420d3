// `orchestrate sweep` end to end, on the mock dataset: every trial is a run
// in the store with its sweep and trial tags and its own overrides; the
// ranking is best first by the metric the runs recorded; a trial that fails
// (a NaN loss) is recorded with its reason and the others still run; a bad
// spec is one located line per problem before anything runs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>

#include "command_runner.h"
#include "orchestrate/testing/scratch_dir.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

const std::string kRecipe = R"(schema_version = 1
[run]
name = "sweep_probe"
device = "cpu"
batch_size = 32
max_steps = 12
log_every = 4
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
num_classes = 10
train_size = 512
test_size = 128
[model]
plugin = "lenet"
[optimizer]
plugin = "momentum"
lr = 0.01
[checkpoint]
every_epochs = 0
at_end = false
[log]
progress = "never"
)";

TEST(SweepCli, EveryTrialIsATaggedRunAndTheRankingIsBestFirst) {
  ScratchDir dir;
  dir.write("probe.toml", kRecipe);
  // lr 1e30 turns the loss into NaN: that trial fails, the others finish.
  const std::string spec = dir.write("lr.toml", R"([sweep]
recipe = "probe.toml"
metric = "eval/loss"
mode = "min"
[sweep.parameters]
"optimizer.lr" = [0.01, 0.05, 1e30]
"optimizer.momentum" = [0.8]
)");
  const std::string db = dir.file("runs.db");
  const auto result = run_orchestrate("sweep " + spec + " --db " + db + " --format json");
  EXPECT_EQ(result.exit_code, 1) << result.output;  // a trial failed
  // stdout's JSON comes last, after the progress on stderr.
  const auto json_start = result.output.rfind("\n[\n");
  ASSERT_NE(json_start, std::string::npos) << result.output;
  const auto ranking = nlohmann::json::parse(result.output.substr(json_start + 1));
  EXPECT_NE(result.output.find("sweep lr: 3 of 3 trial runs ended in "), std::string::npos) << result.output;
  ASSERT_EQ(ranking.size(), 3u) << result.output;
  EXPECT_EQ(ranking[0]["rank"], 1);
  EXPECT_EQ(ranking[1]["rank"], 2);
  EXPECT_LE(ranking[0]["value"].get<double>(), ranking[1]["value"].get<double>());  // min: lowest loss first
  EXPECT_EQ(ranking[2]["state"], "failed");
  EXPECT_EQ(ranking[2]["parameters"]["optimizer.lr"], 1e30);
  EXPECT_NE(ranking[2]["reason"].get<std::string>().find("loss"), std::string::npos) << ranking[2];

  RunStore store(db, StoreAccess::read_only);
  RunFilter tagged;
  tagged.tags = {{"sweep", "lr"}};
  const auto runs = store.find_runs(tagged);
  ASSERT_EQ(runs.size(), 3u);
  for (const auto& row : ranking) {
    const auto details = store.run_details(*store.find_run(std::to_string(row["run"].get<std::int64_t>())));
    std::map<std::string, std::string> params(details.record.params.begin(), details.record.params.end());
    EXPECT_EQ(details.summary.name, "lr-" + std::to_string(row["trial"].get<int>()));
    EXPECT_EQ(std::stod(params.at("optimizer.lr")), row["parameters"]["optimizer.lr"].get<double>());
    EXPECT_EQ(params.at("optimizer.momentum"), "0.8");
    EXPECT_EQ(params.at("run.threads"), "1");
    if (row["state"] == "finished")
      EXPECT_EQ(details.summary.final_metrics.at("eval/loss"), row["value"].get<double>());
  }
  // Each trial's outcome and log beside the store.
  EXPECT_TRUE(std::filesystem::exists(dir.file("sweeps/lr-1/trial-2.log")));
}

// A recipe with its own [sweep]: `sweep` runs its trials, `run` trains it as it is.
TEST(SweepCli, ARecipeCarriesItsOwnSweep) {
  ScratchDir dir;
  const std::string recipe = dir.write("probe.toml", kRecipe + R"([sweep]
metric = "train/loss"
mode = "min"
concurrency = 1
[sweep.parameters]
"optimizer.lr" = [0.01, 0.02]
)");
  auto planned = run_orchestrate("sweep " + recipe + " --dry-run --format csv");
  EXPECT_EQ(planned.exit_code, 0) << planned.output;
  EXPECT_NE(planned.output.find("sweep probe: 2 trials of " + recipe + " checked"), std::string::npos)
      << planned.output;
  const auto alone = run_orchestrate("run " + recipe + " --dry-run");
  EXPECT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_NE(alone.output.find("\nlr = 0.01\n"), std::string::npos) << alone.output;  // the recipe's own value
  EXPECT_EQ(alone.output.find("[sweep]"), std::string::npos) << alone.output;  // not part of the resolved recipe
}

TEST(SweepCli, ABadSpecIsOneLocatedLinePerProblemAndNothingRuns) {
  ScratchDir dir;
  dir.write("probe.toml", kRecipe + "[eval]\nenabled = false\n");
  const std::string spec = dir.write("bad.toml", R"([sweep]
recipe = "probe.toml"
metric = "eval/top1"
concurrency = 1
[sweep.parameters]
"optimizer.lr" = { log = [0.0, 0.1] }
"optimizer.nesterov" = [true]
)");
  const std::string db = dir.file("runs.db");
  auto result = run_orchestrate("sweep " + spec + " --db " + db);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.output, "orchestrate: error: " + spec +
                               ":6:26: optimizer.lr: a log range must stay above 0, but it starts at 0.0; give a "
                               "positive low, or use range = [...]\n");
  // The spec passes; the metric is not one the recipe records (no evaluation),
  // and a trial's recipe does not validate: each named, before anything runs.
  const std::string unlogged = dir.write("unlogged.toml", R"([sweep]
recipe = "probe.toml"
metric = "eval/top1"
concurrency = 1
[sweep.parameters]
"optimizer.lr" = [0.01, -1.0]
)");
  result = run_orchestrate("sweep " + unlogged + " --db " + db);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find(unlogged + ":6:18: optimizer.lr = -1.0: [optimizer] lr: must be > 0\n"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find(unlogged + ":3:10: metric \"eval/top1\" is not one that "), std::string::npos)
      << result.output;
  // Each problem once, at its parameter's line, however many trials meet it.
  const std::string misspelt = dir.write("misspelt.toml", R"([sweep]
recipe = "probe.toml"
metric = "train/loss"
concurrency = 1
[sweep.parameters]
"run.max_steps" = ["abc"]
"optimizer.lrr" = [0.1, 0.01, 0.001]
)");
  result = run_orchestrate("sweep " + misspelt + " --db " + db);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_EQ(result.output, "orchestrate: error: " + misspelt + ":6:19: run.max_steps = \"abc\": [run] max_steps: "
                           "expected an integer, got the string \"abc\"\n" + misspelt + ":7:19: optimizer.lrr = 0.1: "
                           "[optimizer] unknown key 'lrr' for optimizer 'momentum'; did you mean 'lr'? (known: "
                           "weight_decay, decay_norm_and_bias, no_decay, lr, momentum, nesterov, wrappers, "
                           "groups)\n");
  EXPECT_FALSE(std::filesystem::exists(db));  // nothing recorded
}

}  // namespace
}  // namespace orchestrate::testing

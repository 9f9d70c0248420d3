// Sweep specs as users write them, good and bad: every problem at once, each
// at its file:line:column; and the trials they make.
#include "sweep/sweep_spec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "orchestrate/error.h"

namespace orchestrate::sweep {
namespace {

const std::string kGood = R"([sweep]
recipe = "../fashion_mnist_fast.toml"
metric = "eval/top1"
concurrency = 2
[sweep.parameters]
"optimizer.lr" = [0.01, 0.1, 0.3]
schedule.warmup_length = [0, 100]
)";

// kGood with more lines in its [sweep] table.
std::string good_with(const std::string& sweep_lines) {
  std::string text = kGood;
  return text.insert(text.find("[sweep.parameters]"), sweep_lines);
}

std::string error_of(const std::string& text, int cores = 2, int gpus = 0) {
  try {
    parse_sweep_spec(text, "spec.toml", cores, gpus);
  } catch (const RecipeError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

TEST(SweepSpec, AGridOfListsHasOneTrialPerCombinationLastKeyFastest) {
  const SweepSpec spec = parse_sweep_spec(kGood, "sweeps/lr.toml", 2, 0);
  EXPECT_EQ(spec.name, "lr");
  EXPECT_EQ(spec.recipe, "../fashion_mnist_fast.toml");
  EXPECT_EQ(spec.metric, "eval/top1");
  EXPECT_EQ(spec.mode, Mode::max);
  EXPECT_EQ(spec.sampler, Sampler::grid);
  EXPECT_EQ(spec.trials, 6);
  EXPECT_EQ(spec.concurrency, 2);
  const auto trials = sample_trials(spec);
  ASSERT_EQ(trials.size(), 6u);
  using Overrides = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(trials[0].overrides, (Overrides{{"optimizer.lr", "0.01"}, {"schedule.warmup_length", "0"}}));
  EXPECT_EQ(trials[1].overrides, (Overrides{{"optimizer.lr", "0.01"}, {"schedule.warmup_length", "100"}}));
  EXPECT_EQ(trials[5].overrides, (Overrides{{"optimizer.lr", "0.3"}, {"schedule.warmup_length", "100"}}));
  EXPECT_EQ(trials[5].index, 5);
}

TEST(SweepSpec, RandomDrawsStayInTheirRangesAndRepeatWithTheSeed) {
  const std::string text = R"([sweep]
recipe = "base.toml"
metric = "eval/loss"
mode = "min"
trials = 200
seed = 7
[sweep.parameters]
"optimizer.lr" = { log = [0.001, 0.1] }
"optimizer.momentum" = { range = [0.8, 0.99] }
"run.batch_size" = { int = [64, 66] }
"precision.mode" = ["fp32", "bf16"]
)";
  const SweepSpec spec = parse_sweep_spec(text, "s.toml", 1, 0);
  EXPECT_EQ(spec.sampler, Sampler::random);
  EXPECT_EQ(spec.mode, Mode::min);
  const auto trials = sample_trials(spec);
  ASSERT_EQ(trials.size(), 200u);
  std::set<std::string> batches, modes;
  int small_lr = 0;
  for (const auto& trial : trials) {
    const std::map<std::string, std::string> value(trial.overrides.begin(), trial.overrides.end());
    const double lr = std::stod(value.at("optimizer.lr"));
    EXPECT_GE(lr, 0.001);
    EXPECT_LE(lr, 0.1);
    small_lr += lr < 0.01;  // log-uniform: half the draws below the geometric middle
    const double momentum = std::stod(value.at("optimizer.momentum"));
    EXPECT_GE(momentum, 0.8);
    EXPECT_LE(momentum, 0.99);
    batches.insert(value.at("run.batch_size"));
    modes.insert(value.at("precision.mode"));
  }
  EXPECT_GT(small_lr, 70);
  EXPECT_LT(small_lr, 130);
  EXPECT_EQ(batches, (std::set<std::string>{"64", "65", "66"}));  // both ends included
  EXPECT_EQ(modes, (std::set<std::string>{"\"fp32\"", "\"bf16\""}));
  EXPECT_EQ(sample_trials(spec)[17].overrides, trials[17].overrides);
}

TEST(SweepSpec, SobolPointsFillTheRangeEvenly) {
  const std::string text = R"([sweep]
recipe = "base.toml"
metric = "eval/top1"
sampler = "sobol"
trials = 16
[sweep.parameters]
"optimizer.momentum" = { range = [0.0, 1.0] }
)";
  const auto trials = sample_trials(parse_sweep_spec(text, "s.toml", 1, 0));
  std::set<int> sixteenths;
  for (const auto& trial : trials) sixteenths.insert(static_cast<int>(std::stod(trial.overrides[0].second) * 16));
  EXPECT_EQ(sixteenths.size(), 16u);  // one point in each sixteenth: what random draws rarely do
}

TEST(SweepSpec, EveryBadKeyAndRangeIsOneLocatedLineAllAtOnce) {
  const std::string text = R"([sweep]
recipe = "base.toml"
metrc = "eval/top1"
sampler = "random"
trials = 4
concurrency = 3
[sweep.parameters]
"optimizer.lr" = { log = [0.0, 0.1] }
"optimizer.momentum" = { range = [0.9, 0.9] }
lr = [0.1]
)";
  const std::string error = error_of(text);
  EXPECT_NE(error.find("spec.toml:3:1: unknown key 'metrc' in [sweep]; did you mean 'metric'?"), std::string::npos)
      << error;
  EXPECT_NE(error.find("spec.toml:1:1: [sweep] metric is required"), std::string::npos) << error;
  EXPECT_NE(error.find("spec.toml:8:26: optimizer.lr: a log range must stay above 0, but it starts at 0.0"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("spec.toml:9:34: optimizer.momentum: the range [0.9, 0.9] is empty"), std::string::npos)
      << error;
  EXPECT_NE(error.find("spec.toml:10:1: 'lr' is not a recipe key"), std::string::npos) << error;
  EXPECT_NE(error.find("spec.toml:6:15: concurrency 3 x threads 1 is 3 cores, but this machine has 2 usable"),
            std::string::npos)
      << error;
}

TEST(SweepSpec, AGridThatCannotBeEnumeratedOrMiscountedIsRefused) {
  EXPECT_NE(error_of(R"([sweep]
recipe = "b.toml"
metric = "eval/top1"
sampler = "grid"
[sweep.parameters]
"optimizer.lr" = { log = [0.001, 0.1] }
)").find("spec.toml:6:18: optimizer.lr is a range, which a grid cannot enumerate"),
            std::string::npos);
  const SweepSpec asha = parse_sweep_spec(
      kGood + "[sweep.early_stopping]\nscheduler = \"asha\"\nrung = \"steps\"\ngrace = 50\n", "s.toml", 2, 0);
  EXPECT_EQ(asha.early_stopping.scheduler, Scheduler::asha);
  EXPECT_EQ(asha.early_stopping.unit, RungUnit::steps);
  EXPECT_EQ(asha.early_stopping.grace, 50);
  EXPECT_EQ(asha.early_stopping.reduction_factor, 3);
  const std::string miscounted = R"([sweep]
recipe = "b.toml"
metric = "eval/top1"
trials = 5
[sweep.parameters]
"optimizer.lr" = [0.1, 0.2]
)";
  EXPECT_NE(error_of(miscounted).find("spec.toml:4:10: trials = 5, but the grid has 2 combinations"),
            std::string::npos);
}

// A recipe may carry its own [sweep]: without a recipe key, the file is the base recipe.
TEST(SweepSpec, ASweepTableInARecipeSweepsThatRecipe) {
  const std::string recipe = R"(schema_version = 1
[run]
epochs = 1
[sweep]
metric = "eval/top1"
concurrency = 1
[sweep.parameters]
"optimizer.lr" = [0.1, 0.2]
)";
  const SweepSpec spec = parse_sweep_spec(recipe, "recipes/mine.toml", 2, 0);
  EXPECT_EQ(spec.recipe, "mine.toml");
  EXPECT_EQ(spec.name, "mine");
  EXPECT_EQ(spec.trials, 2);
  // A spec file that names its recipe holds nothing else.
  EXPECT_NE(error_of(kGood + "[run]\nepochs = 1\n").find("unknown key 'run' in a sweep spec that names its recipe"),
            std::string::npos);
}

TEST(SweepSpec, ASlurmSweepAsksTheClusterNotThisMachine) {
  // concurrency 8 x threads 4 on a 2-core machine: Slurm's cores, not these.
  const SweepSpec spec = parse_sweep_spec(good_with("executor = \"slurm\"\nthreads = 4\n").replace(
                                              kGood.find("concurrency = 2"), 15, "concurrency = 8") +
                                              "[sweep.slurm]\npartition = \"gpu\"\ntime = \"1:00:00\"\n"
                                              "sbatch = [\"--account=ml\", \"--qos=high\"]\n",
                                          "spec.toml", 2, 0);
  EXPECT_EQ(spec.executor, ExecutorKind::slurm);
  EXPECT_EQ(spec.concurrency, 8);
  EXPECT_EQ(spec.threads, 4);
  EXPECT_EQ(spec.slurm.partition, "gpu");
  EXPECT_EQ(spec.slurm.time, "1:00:00");
  EXPECT_EQ(spec.slurm.sbatch, (std::vector<std::string>{"--account=ml", "--qos=high"}));
  // Without concurrency, the whole array at once: Slurm decides what runs.
  std::string whole = good_with("executor = \"slurm\"\n");
  whole.erase(whole.find("concurrency = 2\n"), 16);
  EXPECT_EQ(parse_sweep_spec(whole, "spec.toml", 2, 0).concurrency, 6);

  const std::string message = error_of(good_with("executor = \"cluster\"\n") +
                                       "[sweep.slurm]\npartiton = \"gpu\"\nsbatch = [\"account=ml\"]\n");
  EXPECT_NE(message.find("spec.toml:5:12: executor = \"cluster\" is not one of \"local\", \"slurm\""),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("unknown key 'partiton' in [sweep.slurm]; did you mean 'partition'?"), std::string::npos)
      << message;
  EXPECT_NE(message.find("sbatch: each option is one string that starts with --"), std::string::npos) << message;
  EXPECT_NE(message.find("[sweep.slurm] is given, but executor is not \"slurm\""), std::string::npos) << message;
}

TEST(SweepSpec, AnEmptyParameterTableIsALocatedProblemNotAnEmptySearch) {
  const std::string message = error_of(R"([sweep]
recipe = "base.toml"
metric = "eval/loss"
sampler = "sobol"
trials = 8
[sweep.parameters]
"optimizer.lr" = { }
)");
  EXPECT_NE(message.find("spec.toml:7:18: optimizer.lr: an empty table"), std::string::npos) << message;
}

TEST(SweepSpec, TooManyGpusOrNoSweepTableIsRefused) {
  EXPECT_NE(error_of(good_with("gpus = 1\n"), 2, 1).find("needs 2 GPUs, but this machine has 1"), std::string::npos);
  EXPECT_NE(error_of("[run]\nseed = 1\n").find("spec.toml: no [sweep] table"), std::string::npos);
  EXPECT_NE(error_of("[sweep\n").find("spec.toml:1:7: TOML syntax error"), std::string::npos);
}

}  // namespace
}  // namespace orchestrate::sweep

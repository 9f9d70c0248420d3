// `orchestrate run --nproc N` as a command line: the flag and the recipe are
// checked once, then the command runs itself as N workers whose output comes
// back prefixed with their rank. (data_parallel_test checks the training.)
#include <gtest/gtest.h>

#include <cstdlib>

#include "command_runner.h"
#include "run_store.h"

namespace orchestrate::testing {
namespace {

const std::string kTinyRecipe = R"(schema_version = 1
[run]
name = "tiny_data_parallel"
batch_size = 8
max_steps = 2
threads = 1
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 32
test_size = 16
[model]
plugin = "lenet"
[optimizer]
plugin = "sgd"
lr = 0.01
)";

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

TEST(DataParallelCli, TwoWorkersRunAsOneJobWithTheirOutputPrefixed) {
  ScratchDir dir;
  const auto recipe = dir.write("tiny.toml", kTinyRecipe);
  const auto result = run_orchestrate("run " + recipe + " --nproc 2 --quiet --db " + dir.file("runs.db"));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // Rank 0 reports for the job; every line is a worker's, the launcher itself
  // says nothing on success.
  EXPECT_EQ(result.output.rfind("[rank 0] run 1 'tiny_data_parallel' finished after 2 steps", 0), 0u)
      << result.output;
  EXPECT_EQ(count_of(result.output, "\n"), count_of(result.output, "\n[rank ") + 1) << result.output;

  // Both workers took part, each knowing it was started by orchestrate.
  RunStore store(dir.file("runs.db"));
  const auto run = store.find_run("tiny_data_parallel");
  ASSERT_TRUE(run);
  EXPECT_EQ(store.step_timings(run->id, 0).size(), 2u);
  EXPECT_EQ(store.step_timings(run->id, 1).size(), 2u);
  bool described = false;
  for (const auto& event : store.events(run->id))
    described |= event.kind == "data_parallel" && event.message.rfind("rank 0 of 2 (orchestrate launch, ", 0) == 0;
  EXPECT_TRUE(described) << "no data_parallel event";
}

TEST(DataParallelCli, NprocBelowOneIsAUsageError) {
  ScratchDir dir;
  const auto recipe = dir.write("tiny.toml", kTinyRecipe);
  const auto result = run_orchestrate("run " + recipe + " --nproc 0 --db " + dir.file("runs.db"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.output,
            "orchestrate: error: run: --nproc 0 is not a number of processes; give --nproc N with N >= 1 (default 1: "
            "train in this process)\n");
}

TEST(DataParallelCli, ARecipeErrorComesOnceBeforeAnyWorkerStarts) {
  ScratchDir dir;
  std::string text = kTinyRecipe;
  text.replace(text.find("lr = 0.01"), 9, "lrate = 0.01");
  const auto recipe = dir.write("bad.toml", text);
  const auto result = run_orchestrate("run " + recipe + " --nproc 2 --db " + dir.file("runs.db"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(count_of(result.output, "\n"), 1u) << result.output;
  EXPECT_EQ(result.output.find("[rank"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("unknown key 'lrate'"), std::string::npos) << result.output;
}

TEST(DataParallelCli, DryRunPrintsTheRecipeOnce) {
  ScratchDir dir;
  const auto recipe = dir.write("tiny.toml", kTinyRecipe);
  const auto result = run_orchestrate("run " + recipe + " --nproc=2 --dry-run");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(count_of(result.output, "name = \"tiny_data_parallel\""), 1u) << result.output;
  EXPECT_EQ(result.output.find("[rank"), std::string::npos) << result.output;
}

TEST(DataParallelCli, NprocUnderAnotherLauncherIsRefused) {
  ScratchDir dir;
  const auto recipe = dir.write("tiny.toml", kTinyRecipe);
  const auto result = run_shell("RANK=1 WORLD_SIZE=2 env -u ORCHESTRATE_PLUGIN_PATH " + std::string(ORCHESTRATE_BIN) +
                                " run " + recipe + " --nproc 2 --db " + dir.file("runs.db"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.output,
            "orchestrate: error: run: --nproc 2 but this process is already rank 1 of 2 launched by torchrun; drop "
            "--nproc (torchrun starts the processes) or run without torchrun\n");
}

}  // namespace
}  // namespace orchestrate::testing

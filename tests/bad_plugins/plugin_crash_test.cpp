// A plugin's native bug (a null write, an abort) ends the run with one line
// naming the plugin and its file, the call and the step, and the run is
// recorded as failed with that line as its error, in one process or on a
// rank of a data-parallel job (core/crash_report).
#include <signal.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "build_paths.h"
#include "command_runner.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

const std::string kMockData = R"(plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 64
test_size = 16
)";

std::string recipe_text(const std::string& data, const std::string& hooks) {
  return R"(schema_version = 1
[run]
batch_size = 8
max_steps = 6
threads = 1
num_workers = 2
[data]
)" + data + R"([model]
plugin = "lenet"
[optimizer]
plugin = "sgd"
lr = 0.01
)" + hooks;
}

const std::string kCrashingHook = R"([[hooks]]
plugin = "crash_at_step"
step = 3
)";

std::string bad_plugin_dir(const std::string& name) {
  return fs::path(std::string(build_paths::kBadPluginDir) + "/" + name).lexically_normal().string();
}

std::string library_in(const std::string& name) { return bad_plugin_dir(name) + "/liborchestrate_" + name + ".so"; }

int lines_with(const std::string& output, const std::string& part) {
  int count = 0;
  for (std::size_t at = output.find(part); at != std::string::npos; at = output.find(part, at + 1)) ++count;
  return count;
}

TEST(PluginCrash, AHookThatWritesThroughNullIsNamedWithItsCallAndStepAndTheRunFails) {
  ScratchDir dir;
  const std::string db = dir.file("runs.db");
  const auto run = run_orchestrate("run " + dir.write("crash.toml", recipe_text(kMockData, kCrashingHook)) +
                                   " --quiet --db " + db + " --plugin-path " + bad_plugin_dir("crashing_hook"));
  EXPECT_EQ(run.exit_code, 128 + SIGSEGV) << run.output;
  const std::string cause = "crashed with SIGSEGV (invalid memory access) in plugin 'crashing_hook' (" +
                            library_in("crashing_hook") +
                            "), in hook 'crash_at_step' after_update, at step 3; the plugin has a bug: report it to "
                            "its author, or leave it out of the recipe";
  EXPECT_NE(run.output.find("orchestrate: " + cause + "\n"), std::string::npos) << run.output;
  EXPECT_EQ(lines_with(run.output, "crashed with"), 1) << run.output;

  // Read at once, the run is failed of it (its breadcrumb) ...
  const std::string breadcrumb = db + "-crash-run1-rank0";
  EXPECT_TRUE(fs::exists(breadcrumb));
  {
    RunStore reader(db, StoreAccess::read_only);
    const auto crashed = reader.find_run("1");
    ASSERT_TRUE(crashed);
    EXPECT_EQ(crashed->status, "failed");
    EXPECT_EQ(crashed->error, cause);
  }
  const auto shown = run_orchestrate("show 1 --db " + db);
  EXPECT_NE(shown.output.find(cause), std::string::npos) << shown.output;

  // ... and the next run in the store records it for good.
  const auto next = run_orchestrate("run " + dir.write("fine.toml", recipe_text(kMockData, "")) +
                                    " --quiet --set run.max_steps=1 --db " + db);
  EXPECT_EQ(next.exit_code, 0) << next.output;
  EXPECT_FALSE(fs::exists(breadcrumb));
  RunStore store(db, StoreAccess::read_only);
  const auto crashed = store.find_run("1");
  ASSERT_TRUE(crashed);
  EXPECT_EQ(crashed->status, "failed");
  EXPECT_EQ(crashed->error, cause);
  const auto events = store.events(1);
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [&](const auto& event) {
    return event.kind == "crash" && event.message.rfind(cause, 0) == 0;
  }));
}

TEST(PluginCrash, ADatasetThatAbortsOnAPipelineThreadIsNamed) {
  ScratchDir dir;
  const std::string db = dir.file("runs.db");
  const auto run = run_orchestrate("run " + dir.write("abort.toml", recipe_text("plugin = \"abort_at_index\"\nindex = 5\n", "")) +
                                   " --quiet --db " + db + " --plugin-path " + bad_plugin_dir("aborting_dataset"));
  EXPECT_EQ(run.exit_code, 128 + SIGABRT) << run.output;
  const std::string cause = "crashed with SIGABRT (aborted: abort(), a failed assert or an uncaught exception) in "
                            "plugin 'aborting_dataset' (" + library_in("aborting_dataset") +
                            "), in dataset 'abort_at_index' example";
  EXPECT_NE(run.output.find("orchestrate: " + cause), std::string::npos) << run.output;
  RunStore reader(db, StoreAccess::read_only);
  const auto crashed = reader.find_run("1");
  ASSERT_TRUE(crashed);
  EXPECT_EQ(crashed->status, "failed");
  EXPECT_EQ(crashed->error.rfind(cause, 0), 0u) << crashed->error;
}

TEST(PluginCrash, AWorkerOfADataParallelJobIsNamedThroughTheLauncher) {
  ScratchDir dir;
  const std::string db = dir.file("runs.db");
  const auto run = run_orchestrate(
      "run " + dir.write("job.toml", recipe_text(kMockData, kCrashingHook + "rank = 1\n")) + " --nproc 2 --quiet --db " +
      db + " --plugin-path " + bad_plugin_dir("crashing_hook"));
  EXPECT_NE(run.exit_code, 0) << run.output;
  const std::string cause = "rank 1 crashed with SIGSEGV (invalid memory access) in plugin 'crashing_hook' (" +
                            library_in("crashing_hook") + "), in hook 'crash_at_step' after_update, at step 3";
  EXPECT_NE(run.output.find("[rank 1] orchestrate: " + cause), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("orchestrate: rank 1 was killed by signal 11 (SIGSEGV)"), std::string::npos) << run.output;
  RunStore reader(db, StoreAccess::read_only);
  const auto crashed = reader.find_run("1");
  ASSERT_TRUE(crashed);
  EXPECT_EQ(crashed->status, "failed");
  EXPECT_EQ(crashed->error.rfind(cause, 0), 0u) << crashed->error;
}

}  // namespace
}  // namespace orchestrate::testing

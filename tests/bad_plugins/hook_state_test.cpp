// A hook's own state survives kill -9 and --resume: the checkpoint holds it
// (orchestrate/stateful.h), and the resumed run hands it back before its
// first update, so a counter of updates still equals the step.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "build_paths.h"
#include "command_runner.h"
#include "small_lenet_recipe.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

TEST(HookState, ACounterInAHookSurvivesKillNineAndResume) {
  ScratchDir dir;
  const std::string plugins = std::string(build_paths::kBadPluginDir) + "/counting_hook";
  const std::string checkpoints = dir.file("ck");
  const std::string recipe = dir.write("count.toml", small_lenet_recipe("max_steps = 30\n", "sgd", R"([checkpoint]
dir = ")" + checkpoints + R"("
every_epochs = 0
every_steps = 5
[[hooks]]
plugin = "count_updates"
sleep_ms = 100
)"));
  const std::string db = dir.file("runs.db");
  // Killed (SIGKILL: no handler runs) once the checkpoint of update 10 is there.
  const auto killed = run_shell(
      "env -u ORCHESTRATE_PLUGIN_PATH -u ORCHESTRATE_DB " + std::string(build_paths::kOrchestrateBin) + " run " +
      recipe + " --quiet --db " + db + " --plugin-path " + plugins + " > " + dir.file("first.log") +
      " 2>&1 & pid=$!; for i in $(seq 600); do [ -d " + checkpoints + "/run-1/step-00000010 ] && break; sleep 0.05; "
      "done; kill -9 $pid; wait $pid; echo exit=$?");
  ASSERT_NE(killed.output.find("exit=137"), std::string::npos) << killed.output << file_bytes(dir.file("first.log"));

  const auto resumed = run_orchestrate("run " + recipe + " --resume 1 --quiet --db " + db + " --plugin-path " + plugins);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  RunStore store(db, StoreAccess::read_only);
  const auto run = store.find_run("1");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "finished");
  EXPECT_EQ(run->final_metrics.at("hook/updates_seen"), 30.0) << "the count went on from the checkpoint's";
}

}  // namespace
}  // namespace orchestrate::testing

// An optimizer that cannot skip on the device (a third party's, not
// deriving from SkipsOnDevice) still has every overflowed fp16 update
// skipped: the host reads each check before stepping it, and the run's
// skip_check event names the plugin that made it wait.
#include <string>

#include <gtest/gtest.h>

#include "build_paths.h"
#include "command_runner.h"
#include "small_lenet_recipe.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

TEST(HostCheckedOptimizer, OverflowsAreSkippedAfterAHostCheckThatNamesTheOptimizer) {
  ScratchDir dir;
  const std::string plugins = std::string(build_paths::kBadPluginDir) + "/host_checked_optimizer";
  const std::string recipe =
      dir.write("fp16.toml", small_lenet_recipe("name = \"waits\"\nmax_steps = 12\n", "torch_sgd",
                                                "[precision]\nmode = \"fp16\"\nloss_scale = 1e12\n"));
  const std::string db = dir.file("runs.db");
  const auto result = run_orchestrate("run " + recipe + " --quiet --db " + db + " --plugin-path " + plugins);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  RunStore store(db, StoreAccess::read_only);
  const auto run = store.find_run("waits");
  ASSERT_TRUE(run);
  std::string skip_check;
  int skipped_events = 0;
  for (const auto& event : store.events(run->id)) {
    if (event.kind == "skip_check") skip_check += event.message;
    if (event.kind == "skipped_update") ++skipped_events;
  }
  EXPECT_NE(skip_check.find("waits for the host to read its inf/nan check: optimizer torch_sgd cannot skip"),
            std::string::npos)
      << skip_check;
  const auto skipped = run->final_metrics.at("train/skipped_updates");
  EXPECT_GT(skipped, 0);
  EXPECT_EQ(skipped_events, static_cast<int>(skipped)) << "one event per skipped update";
}

}  // namespace
}  // namespace orchestrate::testing

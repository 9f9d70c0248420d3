// [log] tensorboard as a user meets it: TensorBoard's own reader finds the
// run's metrics, learning rate, images/s and step-time shares while the run
// trains, the same values the run store holds; a run killed with kill -9
// leaves what it had logged; a directory that cannot be made is refused
// before any run row is written.
#include <gtest/gtest.h>

#include <filesystem>

#include "build_paths.h"
#include "command_runner.h"
#include "orchestrate/testing/python_reference.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

const char* const kRecipe = R"(schema_version = 1
[run]
name = "live"
device = "cpu"
batch_size = 32
log_every = 5
num_workers = 0
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
num_classes = 10
train_size = 320
test_size = 64
[model]
plugin = "convnet"
[optimizer]
plugin = "momentum"
lr = 0.05
[schedule]
plugin = "cosine"
[checkpoint]
every_epochs = 0
at_end = false
[log]
progress = "never"
)";

// What TensorBoard's EventAccumulator reads in DIR's one run directory,
// checked against the store: every train/loss the store has, at its step and
// value (as float32, which is what TensorBoard keeps).
std::string read_back(const std::string& tensorboard_dir, const std::string& db) {
  return run_python(R"PY(
import glob, sqlite3
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
runs = glob.glob(")PY" + tensorboard_dir + R"PY(/*")
assert len(runs) == 1, runs
events = EventAccumulator(runs[0], size_guidance={"scalars": 0})
events.Reload()
tags = set(events.Tags()["scalars"])
for tag in ("train/loss", "train/learning_rate", "perf/images_per_s", "perf/data_wait_share", "perf/compute_share"):
    assert tag in tags, (tag, sorted(tags))
with sqlite3.connect(")PY" + db + R"PY(") as store:
    stored = store.execute("select step, value from metrics where name = 'train/loss' order by step").fetchall()
logged = {e.step: e.value for e in events.Scalars("train/loss")}
assert stored, "the store has no train/loss"
for step, value in stored:
    assert step in logged and abs(logged[step] - value) <= 1e-6 * max(1, abs(value)), (step, value, logged)
rates = [e.value for e in events.Scalars("train/learning_rate")]
assert rates == sorted(rates, reverse=True) and rates[0] > rates[-1], rates  # the cosine schedule, falling
# The resolved recipe as the hparams plugin's session start, in its own message.
from tensorboard.plugins.hparams import plugin_data_pb2
metadata = events.SummaryMetadata("_hparams_/session_start_info")
assert metadata.plugin_data.plugin_name == "hparams", metadata
hparams = plugin_data_pb2.HParamsPluginData.FromString(metadata.plugin_data.content).session_start_info.hparams
assert hparams["optimizer.lr"].number_value == 0.05 and hparams["model.plugin"].string_value == "convnet", hparams
print("ok", len(stored), [round(e.value, 3) for e in events.Scalars("perf/images_per_s")], sorted(tags))
)PY");
}

TEST(LiveTensorboard, TensorboardReadsTheRunsCurvesAsTheStoreHasThem) {
  ScratchDir dir;
  const std::string recipe = dir.write("live.toml", kRecipe), db = dir.file("runs.db"), tb = dir.file("tb");
  const auto ran = run_orchestrate("run " + recipe + " --db " + db + " --set run.max_steps=40 --set 'log.tensorboard=\"" +
                                   tb + "\"'");
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  const std::string checked = read_back(tb, db);
  EXPECT_EQ(checked.rfind("ok ", 0), 0u) << checked;
  EXPECT_NE(checked.find("eval/top1"), std::string::npos) << checked;
  EXPECT_TRUE(fs::is_directory(fs::path(tb) / "1-live"));
  // export tensorboard replays the store into the same tags and values.
  const std::string exported_dir = dir.file("exported");
  ASSERT_EQ(run_orchestrate("export tensorboard 1 " + exported_dir + " --db " + db).exit_code, 0);
  EXPECT_EQ(read_back(exported_dir, db), checked);
}

TEST(LiveTensorboard, AKilledRunLeavesWhatItHadLogged) {
  ScratchDir dir;
  const std::string recipe = dir.write("live.toml", kRecipe), db = dir.file("runs.db"), tb = dir.file("tb");
  // Long enough to be killed while it trains; the events are in the file as
  // they were logged, not written at the end.
  const auto killed = run_shell("timeout -s KILL 6 " + std::string(orchestrate::build_paths::kOrchestrateBin) + " run " + recipe + " --db " + db +
                                " --set run.max_steps=100000 --set 'log.tensorboard=\"" + tb + "\"'");
  ASSERT_EQ(killed.exit_code, 137) << killed.output;
  const std::string checked = read_back(tb, db);
  EXPECT_EQ(checked.rfind("ok ", 0), 0u) << checked;
}

TEST(LiveTensorboard, ADirectoryThatCannotBeMadeIsRefusedBeforeAnyRunRow) {
  ScratchDir dir;
  const std::string recipe = dir.write("live.toml", kRecipe), db = dir.file("runs.db");
  const std::string blocker = dir.write("a_file", "not a directory");
  const auto refused = run_orchestrate("run " + recipe + " --db " + db + " --set 'log.tensorboard=\"" + blocker +
                                       "/tb\"'");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("[log] tensorboard = \"" + blocker + "/tb\": cannot make it"), std::string::npos)
      << refused.output;
  EXPECT_FALSE(fs::exists(db)) << "no run store, no run row";
}

}  // namespace
}  // namespace orchestrate::testing

// `orchestrate sweep` with early stopping and faults, end to end on the mock
// dataset: ASHA stops the losers at their rung and the store keeps every
// trial with its rung and reason; a controller killed with -9 leaves its
// trials saved, and `sweep --resume` finishes the sweep without losing or
// repeating a trial, ranked as the same sweep run unbroken, a resumed trial
// ending on the same weights, bit for bit, as the same trial run unbroken.
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "build_paths.h"
#include "command_runner.h"
#include "orchestrate/error.h"
#include "orchestrate/testing/scratch_dir.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

// 8192 images in batches of 32: 256 updates an epoch, about a second on one
// core, so the controller (which looks once a second) sees each rung while
// the trial still trains.
const std::string kRecipe = R"(schema_version = 1
[run]
name = "asha_probe"
device = "cpu"
batch_size = 32
epochs = 4
log_every = 16
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
num_classes = 10
train_size = 8192
test_size = 128
[model]
plugin = "lenet"
[optimizer]
plugin = "momentum"
lr = 0.01
[eval]
every_epochs = 1
[log]
progress = "never"
)";

// lr 0.03 and 0.01 learn the mock classes at once; 0.1 and 0.3 diverge to
// chance (0.10). With two at a time, the good pair meets rung 0 first, so
// the scheduler's decisions do not depend on timing.
const std::string kSpec = R"([sweep]
recipe = "probe.toml"
metric = "eval/top1"
concurrency = 2
[sweep.parameters]
"optimizer.lr" = [0.03, 0.01, 0.1, 0.3]
[sweep.early_stopping]
scheduler = "asha"
rung = "epochs"
grace = 1
reduction_factor = 2
)";

nlohmann::json json_tail(const std::string& output, const char* opening = "\n[\n") {
  const std::string text = "\n" + output;
  const auto start = text.rfind(opening);
  if (start == std::string::npos) throw std::runtime_error("no JSON in: " + output);
  return nlohmann::json::parse(text.substr(start + 1));
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(SweepScheduling, AshaStopsTheLosersAtTheirFirstRungAndTheStoreKeepsEveryTrial) {
  ScratchDir dir;
  dir.write("probe.toml", kRecipe);
  const std::string spec = dir.write("asha.toml", kSpec);
  const std::string db = dir.file("runs.db");
  const auto result = run_orchestrate("sweep " + spec + " --db " + db + " --format json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto ranking = json_tail(result.output);
  ASSERT_EQ(ranking.size(), 4u) << result.output;
  std::map<double, nlohmann::json> by_lr;
  for (const auto& row : ranking) by_lr[row["parameters"]["optimizer.lr"].get<double>()] = row;
  for (double good : {0.03, 0.01}) {
    EXPECT_EQ(by_lr[good]["state"], "finished") << by_lr[good];
    EXPECT_EQ(by_lr[good]["step"], 1024) << "4 epochs of 256 updates";
  }
  for (double diverged : {0.1, 0.3}) {
    EXPECT_EQ(by_lr[diverged]["state"], "stopped") << by_lr[diverged];
    EXPECT_EQ(by_lr[diverged]["rung"], 0);
    EXPECT_EQ(by_lr[diverged]["step"], 256) << "its value is the evaluation after epoch 1";
    EXPECT_EQ(by_lr[diverged]["reason"], "stopped at rung 0 (epoch 1)");
    EXPECT_GT(by_lr[diverged]["rank"].get<int>(), by_lr[0.03]["rank"].get<int>()) << "finished trials rank first";
  }
  // A stopped trial's run ended early (a SIGINT: saved, interrupted), before its 1024 steps.
  const RunStore store(db, StoreAccess::read_only);
  const auto stopped_run = store.find_run(std::to_string(by_lr[0.3]["run"].get<std::int64_t>()));
  ASSERT_TRUE(stopped_run);
  EXPECT_EQ(stopped_run->status, "interrupted");
  EXPECT_LT(store.step_timings(stopped_run->id).size(), 1024u);

  // The store keeps it: `sweeps` lists it, `sweep show` ranks it as the sweep did.
  const auto sweeps = run_orchestrate("sweeps --db " + db + " --format json");
  ASSERT_EQ(sweeps.exit_code, 0) << sweeps.output;
  const auto listed = nlohmann::json::parse(sweeps.output);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["state"], "finished");
  EXPECT_EQ(listed[0]["scheduler"], "asha");
  EXPECT_EQ(listed[0]["stopped"], 2);
  EXPECT_EQ(listed[0]["best_value"], ranking[0]["value"]);
  const auto shown = run_orchestrate("sweep show asha --db " + db + " --format json");
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_EQ(nlohmann::json::parse(shown.output), ranking);
  const auto table = run_orchestrate("sweep show 1 --db " + db);
  EXPECT_NE(table.output.find("sweep 1 'asha' finished: 4 trials of "), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("stopped at rung 0 (epoch 1)"), std::string::npos) << table.output;
}

TEST(SweepScheduling, AKilledControllerIsResumedWithoutLosingOrRepeatingATrial) {
  ScratchDir dir;
  dir.write("probe.toml", kRecipe);
  const std::string spec = dir.write("asha.toml", kSpec);
  const std::string db = dir.file("runs.db");
  const std::string pid_file = dir.file("sweep.pid");
  const auto started = run_shell("env -u ORCHESTRATE_PLUGIN_PATH -u ORCHESTRATE_DB " +
                                 std::string(build_paths::kOrchestrateBin) + " sweep " + spec + " --db " + db +
                                 " > " + dir.file("first.log") + " 2>&1 & echo $! > " + pid_file);
  ASSERT_EQ(started.exit_code, 0) << started.output;
  const pid_t controller = std::stoi(file_bytes(pid_file));
  // Mid-sweep: both first trials have met rung 0 and train on.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;; std::this_thread::sleep_for(std::chrono::milliseconds(200))) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << file_bytes(dir.file("first.log"));
    if (!fs::exists(db)) continue;
    try {
      const auto sweep = RunStore(db, StoreAccess::read_only).find_sweep("1");
      if (sweep && sweep->trials[0].rung && sweep->trials[1].rung) break;
    } catch (const Error&) {
      // the sweep has made the file but not yet its tables: look again
    }
  }
  ASSERT_EQ(kill(controller, SIGKILL), 0);
  // Read as lost once the kernel has taken the process down (a moment).
  CommandResult lost;
  for (int tries = 0; tries < 50; ++tries, std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    lost = run_orchestrate("sweeps --db " + db);
    if (lost.output.find(" lost ") != std::string::npos) break;
  }
  EXPECT_NE(lost.output.find(" lost "), std::string::npos) << lost.output;

  const auto resumed = run_orchestrate("sweep --resume 1 --db " + db + " --format json");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output << file_bytes(dir.file("first.log"));
  const auto ranking = json_tail(resumed.output);
  ASSERT_EQ(ranking.size(), 4u);
  const RunStore store(db, StoreAccess::read_only);
  const auto sweep = store.find_sweep("1");
  EXPECT_EQ(sweep->sweep.state, "finished");
  RunFilter tagged;
  tagged.tags = {{"sweep_id", "1"}};
  std::map<std::string, int> runs_per_trial;
  for (const auto& run : store.find_runs(tagged)) ++runs_per_trial[run.tags.at("trial")];
  EXPECT_EQ(runs_per_trial, (std::map<std::string, int>{{"0", 1}, {"1", 1}, {"2", 1}, {"3", 1}}))
      << "each trial one run: the interrupted ones resumed, none started twice";
  EXPECT_EQ(sweep->trials[0].state, "finished");
  EXPECT_EQ(sweep->trials[2].state, "stopped");

  // The same sweep never broken ends the same: each trial's state, rung,
  // step and value, and so the same best trial.
  const auto whole = run_orchestrate("sweep " + spec + " --db " + dir.file("unbroken_sweep.db") + " --format json");
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const auto unbroken_ranking = json_tail(whole.output);
  ASSERT_EQ(unbroken_ranking.size(), 4u);
  EXPECT_EQ(ranking[0]["trial"], unbroken_ranking[0]["trial"]) << "the best trial";
  for (std::size_t i = 0; i < 4; ++i)
    for (const char* column : {"trial", "state", "rung", "step", "value"})
      EXPECT_EQ(ranking[i][column], unbroken_ranking[i][column]) << "rank " << i + 1 << ", " << column;

  // Trial 0 was interrupted by its controller's death and resumed: its weights
  // are those of lr 0.03 trained unbroken.
  const auto unbroken = run_orchestrate("run " + dir.file("probe.toml") + " --db " + dir.file("unbroken.db") +
                                        " --quiet --format json --set optimizer.lr=0.03 --set run.threads=1");
  ASSERT_EQ(unbroken.exit_code, 0) << unbroken.output;
  const auto outcome = json_tail(unbroken.output, "\n{\n");
  const auto checkpoints = store.checkpoints(sweep->trials[0].run_id);
  ASSERT_FALSE(checkpoints.empty());
  const std::string resumed_weights = file_bytes((fs::path(checkpoints.back().path) / "model.safetensors").string());
  const std::string unbroken_weights =
      file_bytes((fs::path(outcome["checkpoint"].get<std::string>()) / "model.safetensors").string());
  EXPECT_FALSE(resumed_weights.empty());
  EXPECT_TRUE(resumed_weights == unbroken_weights) << "the resumed trial's final weights differ from an unbroken run's";
}

}  // namespace
}  // namespace orchestrate::testing

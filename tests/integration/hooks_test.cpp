// [[hooks]] end to end: `orchestrate run` with the built-in hooks on the real
// Fashion-MNIST and the tutorial's ConvNet, checked in the run store, the
// output and the files they write.
#include <gtest/gtest.h>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "command_runner.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

const char* const kRecipe = R"(schema_version = 1
[run]
name = "hooks"
seed = 7
device = "cpu"
epochs = 1
batch_size = 32
log_every = 4
num_workers = 0
[data]
plugin = "fashion_mnist"
limit = 1024
[model]
plugin = "convnet"
[optimizer]
plugin = "sgd"
lr = 0.05
[schedule]
plugin = "cosine"
unit = "step"
[eval]
enabled = false
)";

struct Ran {
  CommandResult result;
  std::string db;
};

Ran run_with(const ScratchDir& dir, const std::string& name, const std::string& hooks, const std::string& options = "") {
  const std::string recipe = dir.write(name + ".toml", std::string(kRecipe) + hooks);
  const std::string db = dir.file(name + "/runs.db");
  std::filesystem::create_directories(dir.file(name));
  return {run_orchestrate("run " + recipe + " --db " + db + " " + options), db};
}

// name -> step -> value, straight from the metrics table.
std::map<std::string, std::map<std::int64_t, double>> metrics_of(const std::string& db) {
  SQLite::Database database(db, SQLite::OPEN_READONLY);
  SQLite::Statement query(database, "SELECT name, step, value FROM metrics WHERE run_id = 1");
  std::map<std::string, std::map<std::int64_t, double>> out;
  while (query.executeStep()) out[query.getColumn(0).getString()][query.getColumn(1).getInt64()] = query.getColumn(2).getDouble();
  return out;
}

std::vector<EventRecord> events_of_kind(const std::string& db, const std::string& kind) {
  RunStore store(db, StoreAccess::read_only);
  std::vector<EventRecord> out;
  for (auto& event : store.events(1))
    if (event.kind == kind) out.push_back(event);
  return out;
}

TEST(HooksTest, StopAtStepFinishesTheRunAtThatStepWithTheFullLengthSchedule) {
  ScratchDir dir;
  const auto ran = run_with(dir, "stop", "[[hooks]]\nplugin = \"stop_at_step\"\nstep = 7\n", "--quiet --set eval.enabled=true");
  ASSERT_EQ(ran.result.exit_code, 0) << ran.result.output;
  RunStore store(ran.db, StoreAccess::read_only);
  const auto run = store.find_run("1");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "finished");
  const auto steps = store.step_timings(1);
  ASSERT_EQ(steps.size(), 7U);
  // 1024 images / 32 = 32 updates: the cosine still spans them all, so step 7
  // (index 6) is early in the decay, not at its end as max_steps = 7 would make it.
  EXPECT_NEAR(steps.back().learning_rate, 0.5 * 0.05 * (1 + std::cos(M_PI * 6.0 / 32.0)), 1e-9);
  const auto checkpoints = store.checkpoints(1);
  ASSERT_FALSE(checkpoints.empty());
  EXPECT_EQ(checkpoints.back().step, 7);
  EXPECT_EQ(checkpoints.back().reason, "end");
  EXPECT_TRUE(metrics_of(ran.db)["eval/top1"].count(7)) << "the final evaluation runs at the stop";
  const auto stops = events_of_kind(ran.db, "hook_stop");
  ASSERT_EQ(stops.size(), 1U);
  EXPECT_EQ(stops[0].message, "after step 7: stop_at_step: step 7 reached");
}

TEST(HooksTest, LogEveryNStepsPrintsAndRecordsExactlyThatUpdatesLoss) {
  ScratchDir dir;
  const auto ran = run_with(dir, "log", "[[hooks]]\nplugin = \"log_every_n_steps\"\nevery_n = 5\n",
                            "--set run.max_steps=12 --set log.progress=never");
  ASSERT_EQ(ran.result.exit_code, 0) << ran.result.output;
  for (const char* line : {"step 5/12  epoch 1  loss ", "step 10/12  epoch 1  loss ", "step 12/12  epoch 1  loss "})
    EXPECT_NE(ran.result.output.find(line), std::string::npos) << line << " in:\n" << ran.result.output;
  EXPECT_EQ(ran.result.output.find("step 4/12"), std::string::npos);
  RunStore store(ran.db, StoreAccess::read_only);
  std::map<std::int64_t, double> step_loss;
  for (const auto& row : store.step_timings(1)) step_loss[row.step] = row.loss;
  const auto recorded = metrics_of(ran.db)["train/step_loss"];
  ASSERT_EQ(recorded.size(), 3U);
  for (const auto& [step, loss] : recorded) {
    EXPECT_TRUE(step == 5 || step == 10 || step == 12) << step;
    EXPECT_NEAR(loss, step_loss.at(step), 1e-6) << "step " << step;
  }
}

// every_n = 0 follows the run's own log points (StepView::log_point), and
// the lr of each log point is a metric like the loss, for show and plot.
TEST(HooksTest, AHookSeesTheRunsLogPointsAndTheLearningRateIsAMetric) {
  ScratchDir dir;
  const auto ran = run_with(dir, "rhythm", "[[hooks]]\nplugin = \"log_every_n_steps\"\nevery_n = 0\n",
                            "--set run.max_steps=10 --set log.progress=never");
  ASSERT_EQ(ran.result.exit_code, 0) << ran.result.output;
  for (const char* line : {"step 4/10  epoch 1  loss ", "step 8/10  epoch 1  loss ", "step 10/10  epoch 1  loss "})
    EXPECT_NE(ran.result.output.find(line), std::string::npos) << line << " in:\n" << ran.result.output;
  EXPECT_EQ(ran.result.output.find("step 5/10"), std::string::npos) << ran.result.output;

  RunStore store(ran.db, StoreAccess::read_only);
  std::map<std::int64_t, double> lr_of_step;
  for (const auto& row : store.step_timings(1)) lr_of_step[row.step] = row.learning_rate;
  const auto lr = metrics_of(ran.db)["train/learning_rate"];
  ASSERT_EQ(lr.size(), 3U);  // the log points: 4, 8 and the last, 10
  for (const auto& [step, value] : lr) EXPECT_DOUBLE_EQ(value, lr_of_step.at(step)) << "step " << step;
  const std::string picture = dir.file("lr.svg");
  const auto plotted = run_orchestrate("plot 1 --metric train/learning_rate -o " + picture + " --db " + ran.db);
  EXPECT_EQ(plotted.exit_code, 0) << plotted.output;
  EXPECT_NE(file_bytes(picture).find("train/learning_rate"), std::string::npos) << plotted.output;
  const auto shown = run_orchestrate("show 1 --format json --db " + ran.db);
  EXPECT_NE(shown.output.find("\"train/learning_rate\""), std::string::npos) << shown.output;
}

TEST(HooksTest, PrintModelStatisticsCountsTheConvNetsParametersAndFlops) {
  ScratchDir dir;
  // conv1 frozen: its 320 parameters are not trainable. --quiet drops the
  // progress line, not what a hook was asked to print.
  const auto ran = run_with(dir, "stats", "[[hooks]]\nplugin = \"print_model_statistics\"\n",
                            "--set run.max_steps=1 --set 'checkpoint.frozen=[\"conv1.*\"]' --quiet");
  ASSERT_EQ(ran.result.exit_code, 0) << ran.result.output;
  // Per layer: conv1 1x3x3x32 + 32, conv2 32x3x3x64 + 64, conv3 64x3x3x64 + 64,
  // dense 576x64 + 64, logits 64x10 + 10.
  EXPECT_NE(ran.result.output.find("93,322 parameters (93,002 trainable) in 5 layers"), std::string::npos)
      << ran.result.output;
  for (const char* row : {"conv1", "18,496", "36,928", "650"})
    EXPECT_NE(ran.result.output.find(row), std::string::npos) << row;
  const auto metrics = metrics_of(ran.db);
  EXPECT_EQ(metrics.at("model/parameters").at(0), 93322);
  EXPECT_EQ(metrics.at("model/trainable_parameters").at(0), 93002);
  // 2 FLOPs per multiply-add: convolutions 28->26, 13->11, 5->3 (pooled in
  // between), then the two dense layers; biases, ReLU and pooling not counted.
  const double expected = 2.0 * (26 * 26 * 32 * 1 * 9 + 11 * 11 * 64 * 32 * 9 + 3 * 3 * 64 * 64 * 9 + 576 * 64 + 64 * 10);
  EXPECT_EQ(metrics.at("model/forward_flops_per_image").at(0), expected);
  EXPECT_EQ(events_of_kind(ran.db, "model_statistics").size(), 1U);
}

// The trace's events named `prefix`...
std::vector<nlohmann::json> trace_events(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);  // throws if the file is not JSON
  std::vector<nlohmann::json> out;
  for (const auto& event : trace.at("traceEvents"))
    if (event.contains("name") && event["name"].get<std::string>().rfind(prefix, 0) == 0) out.push_back(event);
  return out;
}

TEST(HooksTest, ProfileWritesAChromeTraceOfTheChosenUpdatesAndRecordsItsPath) {
  ScratchDir dir;
  const auto ran = run_with(dir, "profile", "[[hooks]]\nplugin = \"profile\"\nfirst_step = 3\nsteps = 2\n",
                            "--set run.max_steps=6 --quiet");
  ASSERT_EQ(ran.result.exit_code, 0) << ran.result.output;
  const std::string trace = dir.file("profile/artifacts/runs.db/run-1/profiles/trace-rank0-steps3-4.json");
  ASSERT_TRUE(std::filesystem::is_regular_file(trace)) << ran.result.output;
  std::set<std::string> steps;
  const auto step_ranges = trace_events(trace, "ProfilerStep#");
  for (const auto& event : step_ranges) steps.insert(event["name"].get<std::string>());
  EXPECT_EQ(steps, (std::set<std::string>{"ProfilerStep#3", "ProfilerStep#4"}));
  // The ConvNet's convolutions ran inside the profiled updates.
  const auto& step3 = step_ranges.front();
  const double begin = step3["ts"].get<double>(), end = begin + step3["dur"].get<double>();
  bool conv_inside = false;
  for (const auto& op : trace_events(trace, "aten::conv2d")) {
    const double ts = op["ts"].get<double>();
    conv_inside = conv_inside || (ts >= begin && ts <= end);
  }
  EXPECT_TRUE(conv_inside) << "no aten::conv2d inside " << step3.dump();
  const auto recorded = events_of_kind(ran.db, "profile");
  ASSERT_EQ(recorded.size(), 1U);
  EXPECT_NE(recorded[0].message.find("trace-rank0-steps3-4.json"), std::string::npos) << recorded[0].message;
}

TEST(HooksTest, ProfileEveryNStepsWritesOneTracePerPeriod) {
  ScratchDir dir;
  const auto ran = run_with(dir, "periodic",
                            "[[hooks]]\nplugin = \"profile\"\nfirst_step = 2\nsteps = 1\nevery_n_steps = 3\n"
                            "dir = \"" + dir.file("traces") + "\"\n",
                            "--set run.max_steps=6 --quiet");
  ASSERT_EQ(ran.result.exit_code, 0) << ran.result.output;
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("traces")))
    files.insert(entry.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"trace-rank0-steps2-2.json", "trace-rank0-steps5-5.json"}));
}

TEST(HooksTest, HooksOnEveryRankOfADataParallelJobStopTogetherAndProfileTheirOwnRank) {
  ScratchDir dir;
  // A run before the job, so the job is run 2 in the store but run 1 in the
  // scratch stores of ranks 1..: files go under the job's id, rows under each's own.
  ASSERT_EQ(run_with(dir, "ranks", "", "--set run.max_steps=1 --quiet").result.exit_code, 0);
  const auto ran = run_with(dir, "ranks",
                            "[[hooks]]\nplugin = \"stop_at_step\"\nstep = 4\n"
                            "[[hooks]]\nplugin = \"profile\"\nfirst_step = 2\nsteps = 1\nrank = -1\n",
                            "--nproc 2 --quiet");
  ASSERT_EQ(ran.result.exit_code, 0) << ran.result.output;
  RunStore store(ran.db, StoreAccess::read_only);
  EXPECT_EQ(store.find_run("2")->status, "finished");
  EXPECT_EQ(store.step_timings(2).size(), 4U);
  EXPECT_EQ(store.step_timings(2, 1).size(), 4U);
  // Both ranks write under the job's run (rank 0's id), each its own file.
  for (const char* file : {"trace-rank0-steps2-2.json", "trace-rank1-steps2-2.json"})
    EXPECT_TRUE(std::filesystem::is_regular_file(dir.file(std::string("ranks/artifacts/runs.db/run-2/profiles/") + file)))
        << file << "\n" << ran.result.output;
}

TEST(HooksTest, BadHookEntriesAreRecipeErrorsFoundByDryRun) {
  ScratchDir dir;
  const auto typo = run_with(dir, "typo", "[[hooks]]\nplugin = \"stop_at_stpe\"\nstep = 3\n", "--dry-run");
  EXPECT_EQ(typo.result.exit_code, 2);
  EXPECT_NE(typo.result.output.find("typo.toml:24:10: [[hooks]] entry 0 plugin: unknown hook 'stop_at_stpe'; did "
                                    "you mean 'stop_at_step'?"),
            std::string::npos)
      << typo.result.output;
  const auto missing = run_with(dir, "missing", "[[hooks]]\nplugin = \"stop_at_step\"\n", "");
  EXPECT_EQ(missing.result.exit_code, 2);
  EXPECT_NE(missing.result.output.find("[[hooks]] entry 0 missing required key step for hook 'stop_at_step'"),
            std::string::npos)
      << missing.result.output;
  EXPECT_FALSE(std::filesystem::exists(missing.db)) << "a recipe error writes no run row";
  const std::string scalar = dir.write("scalar.toml", "schema_version = 1\nhooks = 3\n" + std::string(kRecipe).substr(19));
  const auto not_a_list = run_orchestrate("run " + scalar + " --dry-run");
  EXPECT_EQ(not_a_list.exit_code, 2);
  EXPECT_NE(not_a_list.output.find("scalar.toml:2:9: 'hooks' must be an array of tables ([[hooks]]), got integer"),
            std::string::npos)
      << not_a_list.output;
  // --set makes the list when the recipe has none; the resolved recipe shows it.
  const auto set = run_with(dir, "set", "", "--dry-run --set hooks.0.plugin=stop_at_step --set hooks.0.step=3");
  EXPECT_EQ(set.result.exit_code, 0) << set.result.output;
  EXPECT_NE(set.result.output.find("[[hooks]]\nplugin = \"stop_at_step\"\nstep = 3\n"), std::string::npos)
      << set.result.output;
}

}  // namespace
}  // namespace orchestrate::testing

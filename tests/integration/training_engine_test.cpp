// The training engine end to end through the CLI, on the synthetic `mock`
// data: the optimizer chain (wrappers, accumulation), warm-up schedules,
// mixed precision, non-finite losses, and the checks that run at load.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command_runner.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

const std::string kLarsRecipe = R"(schema_version = 1
[run]
name = "mock_lars"
batch_size = 16
max_steps = 60
log_every = 4
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 2048
test_size = 256
[model]
plugin = "lenet"
[optimizer]
plugin = "momentum"
lr = 5.0
weight_decay = 0.0001
[[optimizer.wrappers]]
plugin = "batch_gradients"
num_batches = 4
[[optimizer.wrappers]]
plugin = "lars"
eta = 0.001
[schedule]
plugin = "polynomial"
power = 2.0
end_lr = 0.0001
unit = "step"
warmup = "linear"
warmup_length = 4
warmup_start_lr = 0.5
[precision]
mode = "bf16"
)";

std::string sql(const std::string& db, const std::string& query) {
  return run_shell("sqlite3 " + db + " \"" + query + "\"").output;
}

TEST(TrainingEngine, LarsWithAccumulationWarmupAndBf16TrainsAndCountsUpdates) {
  ScratchDir dir;
  const auto recipe = dir.write("lars.toml", kLarsRecipe);
  const auto dry = run_orchestrate("run " + recipe + " --dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  // The resolved chain, in order, with every default filled in.
  EXPECT_NE(dry.output.find("[[optimizer.wrappers]]\nplugin = \"batch_gradients\"\nnum_batches = 4\n\n"
                            "[[optimizer.wrappers]]\nplugin = \"lars\"\n"),
            std::string::npos)
      << dry.output;

  const auto db = dir.file("runs.db");
  const auto result = run_orchestrate("run " + recipe + " --db " + db + " --quiet");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  RunStore store(db);
  const auto run = store.find_run("mock_lars");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "finished");
  const auto steps = store.step_timings(run->id);
  // Steps count updates, not micro-batches; images count every image.
  ASSERT_EQ(steps.size(), 60u);
  for (const auto& s : steps) EXPECT_EQ(s.images, 4 * 16);
  // Warm-up from 0.5 to 5.0 over 4 updates, then power-2 decay over the other 56.
  EXPECT_DOUBLE_EQ(steps[0].learning_rate, 0.5);
  EXPECT_DOUBLE_EQ(steps[2].learning_rate, 0.5 + (5.0 - 0.5) * 2 / 4);
  EXPECT_DOUBLE_EQ(steps[4].learning_rate, 5.0);
  EXPECT_NEAR(steps[14].learning_rate, (5.0 - 0.0001) * std::pow(1 - 10.0 / 56, 2) + 0.0001, 1e-12);
  EXPECT_GT(run->final_metrics.at("eval/top1"), 0.5);  // separable mock classes; chance is 0.1
  EXPECT_GT(run->final_metrics.at("train/reg_loss"), 0);
  EXPECT_GT(run->final_metrics.at("train/top1"), 0.5);
  EXPECT_GE(run->final_metrics.at("train/top5"), run->final_metrics.at("train/top1"));
  EXPECT_GT(run->final_metrics.at("train/lars_trust_ratio"), 0);
  EXPECT_EQ(sql(db, "select count(*) from run_plugins where name in ('lars','batch_gradients')"), "2\n");
}

TEST(TrainingEngine, Fp16WithStaticLossScaleRecordsTheScale) {
  ScratchDir dir;
  const auto recipe = dir.write("lars.toml", kLarsRecipe);
  const auto db = dir.file("runs.db");
  const auto result = run_orchestrate("run " + recipe + " --db " + db +
                                      " --quiet --set precision.mode=fp16 --set precision.loss_scaling=static"
                                      " --set precision.loss_scale=1024 --set run.max_steps=8");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  RunStore store(db);
  const auto run = store.find_run("mock_lars");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->final_metrics.at("train/loss_scale"), 1024);
  EXPECT_EQ(run->final_metrics.at("train/skipped_updates"), 0);
}

// fp16 at a loss scale that overflows: every such update is skipped on the
// device (momentum behind batch_gradients and lars), then named one by one;
// so is it with an optimizer whose foreach kernels take no flag (adadelta),
// which undoes the step instead. One that cannot skip there is stepped after
// a host check (tests/bad_plugins/host_checked_optimizer_test.cpp).
TEST(TrainingEngine, Fp16OverflowsAreSkippedOnTheDeviceAndEachIsNamed) {
  ScratchDir dir;
  const auto recipe = dir.write("lars.toml", kLarsRecipe);
  const auto db = dir.file("runs.db");
  const std::string overflowing = " --quiet --set precision.mode=fp16 --set precision.loss_scale=1e12"
                                  " --set run.max_steps=12 --set eval.enabled=false";
  const auto result = run_orchestrate("run " + recipe + " --db " + db + overflowing);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  RunStore store(db);
  const auto run = store.find_run("mock_lars");
  ASSERT_TRUE(run);
  const auto id = std::to_string(run->id);
  const auto skipped = run->final_metrics.at("train/skipped_updates");
  EXPECT_GT(skipped, 0);
  EXPECT_EQ(sql(db, "select count(*) from events where run_id=" + id + " and kind='skipped_update'"),
            std::to_string(static_cast<int>(skipped)) + "\n");
  EXPECT_EQ(sql(db, "select message from events where run_id=" + id + " and kind='skipped_update' limit 1"),
            "update 1 (epoch 1) skipped: inf/nan gradients at loss scale 999999995904.000000\n");
  EXPECT_NE(sql(db, "select message from events where run_id=" + id + " and kind='skip_check'")
                .find("skipped on the device"),
            std::string::npos);

  const auto undoing = run_orchestrate("run " + recipe + " --db " + db + overflowing +
                                       " --set run.name=undoes --set optimizer.plugin=adadelta"
                                       " --set optimizer.wrappers=[] --set optimizer.lr=0.01");
  ASSERT_EQ(undoing.exit_code, 0) << undoing.output;
  const auto undoes = store.find_run("undoes");
  ASSERT_TRUE(undoes);
  const auto undoes_id = std::to_string(undoes->id);
  EXPECT_NE(sql(db, "select message from events where run_id=" + undoes_id + " and kind='skip_check'")
                .find("skipped on the device"),
            std::string::npos);
  EXPECT_EQ(sql(db, "select count(*) from events where run_id=" + undoes_id + " and kind='skipped_update'"),
            std::to_string(static_cast<int>(undoes->final_metrics.at("train/skipped_updates"))) + "\n");
  EXPECT_GT(undoes->final_metrics.at("train/skipped_updates"), 0);
}

TEST(TrainingEngine, NonFiniteLossStopsOrIsSkippedAndNamed) {
  ScratchDir dir;
  const auto recipe = dir.write("lars.toml", kLarsRecipe);
  const auto db = dir.file("runs.db");
  // Plain SGD at a huge rate overflows within a few updates.
  const std::string diverge =
      " --quiet --set optimizer.wrappers=[] --set optimizer.plugin=sgd --set optimizer.lr=1e30 --set precision.mode=fp32"
      " --set schedule.warmup=none --set run.max_steps=8 --set eval.enabled=false";
  const auto stopped = run_orchestrate("run " + recipe + " --db " + db + diverge + " --set run.name=stop");
  EXPECT_EQ(stopped.exit_code, 1);
  EXPECT_NE(stopped.output.find("training diverged: loss is"), std::string::npos) << stopped.output;
  EXPECT_NE(stopped.output.find("set [run] on_nonfinite = \"skip\""), std::string::npos) << stopped.output;
  RunStore store(db);
  EXPECT_EQ(store.find_run("stop")->status, "failed");

  const auto skipped = run_orchestrate("run " + recipe + " --db " + db + diverge +
                                       " --set run.name=skip --set run.on_nonfinite=skip");
  EXPECT_EQ(skipped.exit_code, 0) << skipped.output;
  const auto id = std::to_string(store.find_run("skip")->id);
  EXPECT_NE(sql(db, "select count(*) from events where run_id=" + id + " and kind='skipped_update'"), "0\n");
  EXPECT_NE(sql(db, "select message from events where run_id=" + id + " and kind='skipped_update' limit 1")
                .find("skipped: loss is not finite"),
            std::string::npos);
}

TEST(TrainingEngine, CrossKeyAndChainErrorsAreFoundByDryRunWithTheirLines) {
  ScratchDir dir;
  std::string text = kLarsRecipe;
  text.replace(text.find("plugin = \"batch_gradients\""), 26, "plugin = \"clip_by_global_norm\"\nmax_norm = 1.0");
  text.replace(text.find("num_batches = 4\n"), 16, "");
  text.replace(text.find("plugin = \"lars\""), 15, "plugin = \"batch_gradients\"\nnum_batches = 2");
  text.replace(text.find("eta = 0.001\n"), 12, "");
  const auto recipe = dir.write("bad.toml", text);
  const auto result = run_orchestrate("run " + recipe + " --dry-run");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find(recipe + ":23:1: [[optimizer.wrappers]] entry 1: 'batch_gradients' must be the first "
                                        "wrapper"),
            std::string::npos)
      << result.output;

  const auto piecewise = run_orchestrate("run " + dir.write("ok.toml", kLarsRecipe) +
                                         " --dry-run --set schedule.plugin=piecewise --set schedule.factors=[1.0,0.2,0.1]"
                                         " --set schedule.boundaries=[5]");
  EXPECT_EQ(piecewise.exit_code, 2) << piecewise.output;
  EXPECT_NE(piecewise.output.find("[schedule] piecewise: "), std::string::npos) << piecewise.output;
}

// Every second of a run is a step's, an evaluation's or setup's, so images/s
// from the report agrees with images over the training wall time.
TEST(TrainingEngine, ReportAccountsForTheWallTime) {
  ScratchDir dir;
  const auto db = dir.file("runs.db");
  const auto result = run_orchestrate("run " + dir.write("lars.toml", kLarsRecipe) + " --db " + db +
                                      " --quiet --set eval.every_epochs=1 --set run.log_every=1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto report = run_orchestrate("report throughput mock_lars --db " + db + " --format json");
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const auto rows = nlohmann::json::parse(report.output);
  ASSERT_EQ(rows.size(), 1u);
  const auto& row = rows[0];
  const double wall = row["wall_s"], setup = row["setup_s"], train = row["train_s"], eval = row["eval_s"];
  EXPECT_GT(eval, 0);
  EXPECT_GE(setup, 0);
  EXPECT_NEAR(row["accounted"].get<double>(), 1.0, 0.02) << report.output;
  const double images = 60.0 * 4 * 16;
  EXPECT_NEAR(images / train, images / (wall - setup - eval), 0.02 * images / train) << report.output;
}

// Log points are chosen by step, never by the clock: with step rows written
// by time after every update (flush_secs) and checkpoints saved by time too,
// two identical runs record the same step rows and metrics, apart from the
// times, so their logged curves can be compared point for point.
TEST(TrainingEngine, TwoIdenticalRunsLogIdenticalRowsWhateverTheClock) {
  ScratchDir dir;
  const auto recipe = dir.write("lars.toml", kLarsRecipe);
  const std::string same =
      " --quiet --set run.max_steps=22 --set run.log_every=4 --set run.threads=1 --set log.flush_secs=0.000001"
      " --set checkpoint.save_interval_secs=0.000001 --set checkpoint.keep_max=0";
  std::vector<std::string> dbs;
  for (const char* name : {"first", "second"}) {
    dbs.push_back(dir.file(std::string(name) + ".db"));
    const auto result = run_orchestrate("run " + recipe + " --db " + dbs.back() + same);
    ASSERT_EQ(result.exit_code, 0) << result.output;
  }
  const std::string steps =
      "select step, epoch, images, rank, printf('%.17g', loss), printf('%.17g', learning_rate), bytes_sent"
      " from step_timings order by rank, step";
  const std::string metrics =
      "select name, step, epoch, printf('%.17g', value) from metrics"
      " where name not like 'time/%' and name != 'perf/peak_flops_per_s' order by name, step";  // both by the clock
  const std::string first_steps = sql(dbs[0], steps), first_metrics = sql(dbs[0], metrics);
  EXPECT_EQ(std::count(first_steps.begin(), first_steps.end(), '\n'), 22) << first_steps;
  // train/loss at steps 4, 8, ..., 20 and the last, 22: none chosen by the clock.
  EXPECT_NE(first_metrics.find("train/loss|20|"), std::string::npos) << first_metrics;
  EXPECT_NE(first_metrics.find("train/loss|22|"), std::string::npos) << first_metrics;
  EXPECT_EQ(sql(dbs[0], "select count(*) from metrics where name = 'train/loss'"), "6\n") << first_metrics;
  EXPECT_NE(sql(dbs[0], "select count(*) from checkpoints where reason = 'time'"), "0\n");
  EXPECT_EQ(sql(dbs[1], steps), first_steps);
  EXPECT_EQ(sql(dbs[1], metrics), first_metrics);
}

TEST(TrainingEngine, DescribeCoversTheNewTablesAndKinds) {
  const auto table = run_orchestrate("describe recipe optimizer.groups");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_EQ(table.output.rfind("[[optimizer.groups]]: parameters by name", 0), 0u) << table.output;
  EXPECT_NE(table.output.find("lr_scale"), std::string::npos) << table.output;
  const auto lars = run_orchestrate("describe optimizer_wrapper lars");
  ASSERT_EQ(lars.exit_code, 0) << lars.output;
  EXPECT_NE(lars.output.find("eta      float  0.001"), std::string::npos) << lars.output;
  const auto unknown = run_orchestrate("describe recipe optimiser");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find(
                "unknown table; did you mean 'optimizer'? (known: run, data, preprocessing, model, loss, optimizer, "
                "optimizer.wrappers"),
            std::string::npos)
      << unknown.output;
}

}  // namespace
}  // namespace orchestrate::testing

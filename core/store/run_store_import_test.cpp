// store import: every row of every run comes along, an eval run keeps its
// source, and importing again after the runs went on updates them in place,
// never duplicating one, and keeps what links to them (a sweep's trials).
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "orchestrate/testing/scratch_dir.h"
#include "store/metric_history.h"
#include "store/run_store.h"
#include "store/run_store_test_support.h"

namespace orchestrate {
namespace {

TEST(StoreImportTest, CopiesEveryRowOfEveryRunAndAgainUpdatesInPlace) {
  testing::ScratchDir dir;
  const std::string trial_store = dir.file("trial.db");
  const std::string main_store = dir.file("main.db");
  std::int64_t train = 0, eval = 0;
  {
    RunStore source(trial_store);
    source.set_invocation({"orchestrate run probe.toml", {{"sweep", "lr"}, {"trial", "3"}}});
    train = source.begin_run(testing::sample_run("trial-3"));
    for (int step = 1; step <= 3; ++step) source.record_step(train, testing::step_number(step));
    source.record_metric(train, 3, 1, "eval/top1", 0.75);
    source.record_checkpoint(
        {train, 3, 1, 1234, "checkpoints/trial.db/run-1/step-3", "", "signal", {{"eval/top1", 0.75}}});
    source.finish_run(train, RunStatus::interrupted);
    RunRecord evaluated = testing::sample_run("trial-3-eval");
    evaluated.source_run_id = train;
    eval = source.begin_run(evaluated);
    source.finish_run(eval, RunStatus::finished);
  }
  RunStore store(main_store);
  const std::int64_t already = store.begin_run(testing::sample_run("here before"));
  store.finish_run(already, RunStatus::finished);
  const auto ids = store.import_runs(trial_store);
  ASSERT_EQ(ids.size(), 2u);
  const std::int64_t here = ids.at(train);
  EXPECT_NE(here, already) << "a new id here, not the source's";
  const auto run = store.find_run(std::to_string(here));
  ASSERT_TRUE(run);
  EXPECT_EQ(run->name, "trial-3");
  EXPECT_EQ(run->status, "interrupted");
  EXPECT_EQ(run->tags, (std::map<std::string, std::string>{{"sweep", "lr"}, {"trial", "3"}}));
  EXPECT_EQ(store.step_timings(here).size(), 3u);
  EXPECT_DOUBLE_EQ(store.step_timings(here)[2].loss, testing::step_number(3).loss);
  EXPECT_EQ(store.checkpoints(here).size(), 1u);
  EXPECT_EQ(store.checkpoints(here)[0].metrics.at("eval/top1"), 0.75);
  const auto params = store.run_details(*run).record.params;
  const std::map<std::string, std::string> expected{{"optimizer.lr", "0.2"}, {"data.batch_size", "256"}};
  const std::map<std::string, std::string> imported(params.begin(), params.end());
  EXPECT_EQ(imported, expected);
  EXPECT_EQ(store.find_run(std::to_string(ids.at(eval)))->source_run_id, here) << "the eval run's source, mapped";

  // A sweep's trial links the imported run; the trial resumes and records more; import again.
  SweepTrialRecord trial;
  trial.trial = 0;
  trial.overrides = {{"optimizer.lr", "0.1"}};
  const std::int64_t sweep = store.begin_sweep(SweepRecord{}, {trial});
  trial.sweep_id = sweep;
  trial.run_id = here;
  store.record_sweep_trial(trial);
  {
    RunStore source(trial_store);
    source.resume_run(train, 3, "resumed");
    for (int step = 4; step <= 6; ++step) source.record_step(train, testing::step_number(step));
    source.record_metric(train, 6, 2, "eval/top1", 0.9);
    source.finish_run(train, RunStatus::finished);
  }
  const auto again = store.import_runs(trial_store);
  EXPECT_EQ(again, ids) << "the same ids: replaced in place";
  EXPECT_EQ(store.find_runs(RunFilter{}).size(), 3u) << "no run twice";
  EXPECT_EQ(store.find_run(std::to_string(here))->status, "finished");
  EXPECT_EQ(store.step_timings(here).size(), 6u);
  EXPECT_EQ(read_metric_history(main_store, here).at("eval/top1").size(), 2u);
  EXPECT_EQ(store.find_sweep(std::to_string(sweep))->trials[0].run_id, here) << "the trial still names its run";
}

TEST(StoreImportTest, RefusesItselfAndAFileThatIsNotAStore) {
  testing::ScratchDir dir;
  RunStore store(dir.file("main.db"));
  EXPECT_NE(testing::error_of([&] { store.import_runs(dir.file("main.db")); }).find("is this store"),
            std::string::npos);
  std::ofstream(dir.file("notes.txt")) << "not a database at all, just some text that is long enough";
  EXPECT_NE(testing::error_of([&] { store.import_runs(dir.file("notes.txt")); }).find("notes.txt"), std::string::npos);
  EXPECT_NE(testing::error_of([&] { store.import_runs(dir.file("missing.db")); }).find("is not a file"),
            std::string::npos);
}

}  // namespace
}  // namespace orchestrate

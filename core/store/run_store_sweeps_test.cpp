// The sweeps and sweep_trials tables: what a sweep's controller writes is
// what `sweep show` and `sweep --resume` read back, and a killed controller
// reads as lost.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "orchestrate/testing/scratch_dir.h"
#include "store/run_store.h"
#include "store/run_store_test_support.h"

namespace orchestrate {
namespace {

SweepRecord sample_sweep() {
  SweepRecord sweep;
  sweep.name = "lr";
  sweep.spec_path = "recipes/sweeps/lr.toml";
  sweep.spec = "[sweep]\nrecipe = \"base.toml\"\n";
  sweep.recipe_path = "recipes/base.toml";
  sweep.metric = "eval/top1";
  sweep.scheduler = "asha";
  sweep.command_line = "orchestrate sweep recipes/sweeps/lr.toml";
  return sweep;
}

std::vector<SweepTrialRecord> two_trials() {
  SweepTrialRecord first, second;
  first.trial = 0;
  first.overrides = {{"optimizer.lr", "0.1"}, {"data.batch_size", "64"}};
  second.trial = 1;
  second.overrides = {{"optimizer.lr", "0.01"}, {"data.batch_size", "64"}};
  return {first, second};
}

TEST(SweepStoreTest, KeepsTheSweepItsTrialsInSpecOrderAndWhatEachBecame) {
  testing::ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  const std::int64_t run = store.begin_run(testing::sample_run());
  const std::int64_t id = store.begin_sweep(sample_sweep(), two_trials());
  SweepTrialRecord stopped = two_trials()[1];
  stopped.sweep_id = id;
  stopped.state = "stopped";
  stopped.run_id = run;
  stopped.rung = 0;
  stopped.step = 469;
  stopped.value = 0.81;
  stopped.seconds = 12.5;
  store.record_sweep_trial(stopped);
  store.set_sweep_best(id, 1);
  store.end_sweep(id, "finished");

  const auto details = store.find_sweep(std::to_string(id));
  ASSERT_TRUE(details);
  EXPECT_EQ(details->sweep.name, "lr");
  EXPECT_EQ(details->sweep.spec, "[sweep]\nrecipe = \"base.toml\"\n");
  EXPECT_EQ(details->sweep.scheduler, "asha");
  EXPECT_EQ(details->sweep.state, "finished");
  EXPECT_EQ(details->sweep.best_trial, 1);
  EXPECT_FALSE(details->sweep.ended_at.empty());
  EXPECT_EQ(details->sweep.pid, getpid());
  ASSERT_EQ(details->trials.size(), 2u);
  EXPECT_EQ(details->trials[0].state, "pending");
  EXPECT_EQ(details->trials[0].run_id, 0);
  EXPECT_FALSE(details->trials[0].value);
  EXPECT_EQ(details->trials[0].overrides, two_trials()[0].overrides) << "the spec's order, not sorted by key";
  EXPECT_EQ(details->trials[1].state, "stopped");
  EXPECT_EQ(details->trials[1].run_id, run);
  EXPECT_EQ(details->trials[1].rung, 0);
  EXPECT_EQ(details->trials[1].step, 469);
  EXPECT_DOUBLE_EQ(*details->trials[1].value, 0.81);
  EXPECT_DOUBLE_EQ(details->trials[1].seconds, 12.5);
  EXPECT_EQ(store.find_sweep("lr")->sweep.id, id) << "by name too";
  EXPECT_FALSE(store.find_sweep("99"));
  EXPECT_FALSE(store.find_sweep("nothing"));
}

TEST(SweepStoreTest, ASweepWhoseControllerDiedReadsAsLostUntilTakenUp) {
  testing::ScratchDir dir;
  const std::string path = dir.file("runs.db");
  const pid_t child = fork();
  if (child == 0) {
    RunStore store(path);
    store.begin_sweep(sample_sweep(), two_trials());
    _exit(0);  // never ends the sweep: as kill -9 would leave it
  }
  int status = 0;
  waitpid(child, &status, 0);
  RunStore store(path);
  ASSERT_EQ(store.list_sweeps().size(), 1u);
  EXPECT_EQ(store.list_sweeps()[0].state, "lost");
  store.take_up_sweep(store.list_sweeps()[0].id, "orchestrate sweep --resume 1");
  EXPECT_EQ(store.list_sweeps()[0].state, "running") << "this process, alive, controls it now";
  EXPECT_EQ(store.list_sweeps()[0].command_line, "orchestrate sweep --resume 1");
  EXPECT_NE(testing::error_of([&] { store.take_up_sweep(7, ""); }).find("no sweep 7"), std::string::npos);
}

TEST(SweepStoreTest, ListsNewestFirstAndAReadOnlyStoreReadsThem) {
  testing::ScratchDir dir;
  const std::string path = dir.file("runs.db");
  {
    RunStore store(path);
    store.begin_sweep(sample_sweep(), two_trials());
    SweepRecord other = sample_sweep();
    other.name = "wd";
    store.begin_sweep(other, {});
  }
  const RunStore reader(path, StoreAccess::read_only);
  const auto sweeps = reader.list_sweeps();
  ASSERT_EQ(sweeps.size(), 2u);
  EXPECT_EQ(sweeps[0].name, "wd");
  EXPECT_EQ(sweeps[1].name, "lr");
  EXPECT_EQ(reader.find_sweep("lr")->trials.size(), 2u);
}

}  // namespace
}  // namespace orchestrate

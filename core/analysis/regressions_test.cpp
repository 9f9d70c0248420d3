// report regressions on a store of made-up runs: a slow run among equal ones
// is flagged with the phase that grew; noisy but equal runs are not; other
// recipes, hosts and world sizes are never compared.
#include "analysis/regressions.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "orchestrate/testing/scratch_dir.h"

namespace orchestrate {
using testing::ScratchDir;
namespace {

// A finished run of 40 steps of 32 images: `step_s` a step (each scaled by
// 1 + jitter * a uniform draw in [-1, 1]), `data_wait_s` of it waiting for data.
std::int64_t add_run(RunStore& store, const std::string& name, double step_s, double data_wait_s, double jitter,
                     unsigned seed, const std::string& lr = "0.1", const std::string& host = "box", int world = 1) {
  RunRecord record;
  record.name = name;
  record.host = host;
  record.device = "cpu";
  record.world_size = world;
  record.params = {{"optimizer.lr", lr}, {"run.name", "\"" + name + "\""}};
  const auto id = store.begin_run(record);
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> draw(-1, 1);
  for (int s = 0; s < 40; ++s) {
    StepTiming t;
    t.step = s + 1;
    t.images = 32;
    const double scale = 1 + jitter * draw(random);
    t.data_wait_s = data_wait_s * scale;
    t.compute_s = (step_s - data_wait_s) * scale;
    t.total_s = step_s * scale;
    store.record_step(id, t);
  }
  store.finish_run(id, RunStatus::finished);
  return id;
}

std::vector<RegressionRow> regressions_in(RunStore& store, double threshold) {
  store.flush();
  RunFilter all;
  return find_regressions(store, store.find_runs(all), threshold);
}

TEST(Regressions, ASlowRunIsFlaggedWithThePhaseThatGrew) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  add_run(store, "a", 0.100, 0.010, 0.02, 1);
  add_run(store, "b", 0.101, 0.010, 0.02, 2);
  add_run(store, "c", 0.099, 0.010, 0.02, 3);
  const auto slow = add_run(store, "slow", 0.130, 0.040, 0.02, 4);  // 30 ms more data wait a step
  const auto rows = regressions_in(store, 0.05);
  ASSERT_EQ(rows.size(), 3u);  // b, c and slow have earlier runs
  EXPECT_FALSE(rows[0].flagged);
  EXPECT_FALSE(rows[1].flagged);
  const auto& row = rows[2];
  EXPECT_EQ(row.run_id, slow);
  EXPECT_EQ(row.baseline_runs, 3);
  EXPECT_TRUE(row.flagged);
  EXPECT_NEAR(row.change, 0.100 / 0.130 - 1, 0.02);
  EXPECT_EQ(row.grown_phase, "data_wait");
  EXPECT_NEAR(row.grown_ms_per_image, 30.0 / 32, 0.1);
}

TEST(Regressions, NoisyButEqualRunsAreNotFlaggedThoughTheirMediansDiffer) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  // Steps scattered by +-40 %: medians of two such runs can differ by more
  // than the 5 % threshold, but not by more than the runs' own spread.
  add_run(store, "noisy1", 0.1, 0.01, 0.4, 11);
  add_run(store, "noisy2", 0.1, 0.01, 0.4, 12);
  const auto rows = regressions_in(store, 0.05);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].flagged) << "change " << rows[0].change << ", noise " << rows[0].noise;
  EXPECT_GT(rows[0].noise, 0.2);
}

TEST(Regressions, OnlyRunsOfTheSameRecipeHostAndWorldSizeAreCompared) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  add_run(store, "fast", 0.1, 0.01, 0.01, 1);
  add_run(store, "other_lr", 0.3, 0.01, 0.01, 2, "0.2");
  add_run(store, "other_host", 0.3, 0.01, 0.01, 3, "0.1", "elsewhere");
  add_run(store, "two_ranks", 0.3, 0.01, 0.01, 4, "0.1", "box", 2);
  EXPECT_TRUE(regressions_in(store, 0.05).empty());
  add_run(store, "same_again", 0.1, 0.01, 0.01, 5);  // only the run name differs: compared
  const auto rows = regressions_in(store, 0.05);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "same_again");
  EXPECT_FALSE(rows[0].flagged);
}

}  // namespace
}  // namespace orchestrate

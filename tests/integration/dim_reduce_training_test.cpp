// Dimension-reduce training end to end on the real Fashion-MNIST: stage 1
// saves weight snapshots, stage 2 starts from its weights and trains in the
// PCA subspace of those snapshots; checked in the files, the run store and
// the error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>
#include <memory>
#include <string>

#include "checkpoint/safetensors.h"
#include "command_runner.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

const char* const kRecipe = R"(schema_version = 1
[run]
name = "stage"
seed = 11
device = "cpu"
batch_size = 64
log_every = 4
num_workers = 0
[data]
plugin = "fashion_mnist"
limit = 2048
[model]
plugin = "convnet"
[optimizer]
plugin = "adam"
lr = 0.001
eps = 1e-7
[checkpoint]
every_epochs = 0
)";

struct Stages {
  ScratchDir dir;
  std::string recipe, db;
  CommandResult stage1, stage2;
  std::string snapshots() const { return dir.file("snapshots/runs.db/run-1"); }
  // Stage 2 from stage 1's last checkpoint: 8 components, 10 trial steps.
  std::string stage_two_settings() const {
    const auto checkpoints = RunStore(db, StoreAccess::read_only).checkpoints(1);
    return " --set checkpoint.init_from=" + checkpoints.back().path +
           " --set dim_reduce.enabled=true --set dim_reduce.n_components=8 --set dim_reduce.snapshots=" +
           snapshots() + " --set dim_reduce.line_search_steps=10 --quiet";
  }
};

// Stage 1: 2 epochs of 32 updates, a snapshot every 2 updates, the newest 12 kept.
// Stage 2: 1 epoch from stage 1's last weights in 8 dimensions, with a line
// search of 10 trial steps: with the seed's 3, every step of the first 12 was
// the smallest trial (0.3025) without a sufficient decrease, the loss rose
// from 0.57 to 6.7 and top-1 fell from 0.708 to 0.361 (measured on a 2-core CPU).
// (One test runs the stages once and checks them all: stage 1 is most of the time.)
std::unique_ptr<Stages> run_stages() {
  auto s = std::make_unique<Stages>();
  s->recipe = s->dir.write("stage.toml", kRecipe);
  s->db = s->dir.file("runs.db");
  s->stage1 = run_orchestrate("run " + s->recipe + " --db " + s->db +
                              " --set run.epochs=2 --set snapshots.every_steps=2 --set snapshots.keep=12 --quiet");
  if (s->stage1.exit_code == 0) {
    s->stage2 = run_orchestrate("run " + s->recipe + " --db " + s->db + " --set run.epochs=1" + s->stage_two_settings());
  }
  return s;
}

void stage_one_keeps_the_newest_snapshots_of_the_trainable_weights(Stages& s) {
  ASSERT_EQ(s.stage1.exit_code, 0) << s.stage1.output;
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(s.snapshots())) names.insert(entry.path().filename().string());
  ASSERT_EQ(names.size(), 12u);
  EXPECT_EQ(*names.begin(), "step-00000042.safetensors");
  EXPECT_EQ(*names.rbegin(), "step-00000064.safetensors");
  const auto header = read_safetensors_header(s.snapshots() + "/step-00000064.safetensors");
  std::int64_t weights = 0;
  for (const auto& tensor : header) {
    std::int64_t count = 1;
    for (auto size : tensor.shape) count *= size;
    weights += count;
  }
  EXPECT_EQ(weights, 93322) << "every trainable parameter of the ConvNet, nothing else";
  int snapshot_events = 0;
  for (const auto& event : RunStore(s.db, StoreAccess::read_only).events(1)) snapshot_events += event.kind == "snapshot";
  EXPECT_EQ(snapshot_events, 32);
}

void stage_two_trains_in_the_pca_subspace_and_keeps_the_accuracy(Stages& s) {
  ASSERT_EQ(s.stage1.exit_code, 0) << s.stage1.output;
  ASSERT_EQ(s.stage2.exit_code, 0) << s.stage2.output;
  RunStore store(s.db, StoreAccess::read_only);
  const auto first = store.find_run("1");
  const auto second = store.find_run("2");
  ASSERT_TRUE(first && second);
  EXPECT_EQ(second->status, "finished");
  std::string said;
  for (const auto& event : store.events(2))
    if (event.kind == "dim_reduce") said = event.message;
  EXPECT_NE(said.find("PCA of 12 weight snapshots"), std::string::npos) << said;
  EXPECT_NE(said.find("8 components of 93322 weights"), std::string::npos) << said;
  const auto pca = read_safetensors_header(s.dir.file("artifacts/runs.db/run-2/pca_mat.safetensors"));
  ASSERT_EQ(pca.size(), 2u);
  EXPECT_EQ(pca[0].name, "components");
  EXPECT_EQ(pca[0].shape, (std::vector<std::int64_t>{8, 93322}));
  // The last update took a step of the line search (a power of 0.55), or
  // none when no trial passed (the safeguarded rule's restart).
  const double step = second->final_metrics.at("train/dim_reduce_step");
  if (step != 0.0) {
    const double power = std::log(step) / std::log(0.55);
    EXPECT_NEAR(power, std::round(power), 1e-9) << step;
    EXPECT_LE(power, 9.0) << step;
  }
  const double before = first->final_metrics.at("eval/top1");
  const double after = second->final_metrics.at("eval/top1");
  std::cout << "eval/top1: " << before << " after stage 1, " << after << " after stage 2\n";
  // Measured 0.708 after stage 1 and 0.729 after stage 2 on a 2-core CPU.
  EXPECT_GE(after, before - 0.02) << s.stage2.output;
}

// Two ranks: rank 0 computes the PCA and broadcasts it, each update's
// gradient and line-search losses are the means over both, so both take the
// same steps; the job's rows and its PCA event are rank 0's.
void stage_two_runs_data_parallel_with_one_projection(Stages& s) {
  ASSERT_EQ(s.stage1.exit_code, 0) << s.stage1.output;
  const std::string db = s.dir.file("parallel.db");
  const auto result =
      run_orchestrate("run " + s.recipe + " --nproc 2 --db " + db + " --set run.max_steps=6" + s.stage_two_settings());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  RunStore store(db, StoreAccess::read_only);
  const auto run = store.find_run("1");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "finished");
  int pca_events = 0;
  for (const auto& event : store.events(1)) pca_events += event.kind == "dim_reduce";
  EXPECT_EQ(pca_events, 1) << "rank 0 alone computes the projection";
  EXPECT_EQ(store.step_timings(1, 0).size(), 6u);
  EXPECT_EQ(store.step_timings(1, 1).size(), 6u);
  EXPECT_TRUE(std::isfinite(run->final_metrics.at("train/loss")));
}

TEST(DimReduceTraining, WhatStageTwoCannotCombineWithIsARecipeErrorBeforeAnyRun) {
  ScratchDir dir;
  const std::string recipe = dir.write("r.toml", std::string(kRecipe) +
                                                     "[[optimizer.wrappers]]\nplugin = \"clip_by_global_norm\"\nmax_norm = 1.0\n"
                                                     "[dim_reduce]\nenabled = true\nsnapshots = \"" +
                                                     dir.path().string() + "\"\n");
  const std::string db = dir.file("runs.db");
  for (const std::string extra : {"", " --dry-run"}) {
    const auto result = run_orchestrate("run " + recipe + " --db " + db + extra);
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_NE(result.output.find("[dim_reduce] enabled = true: the update is dim_reduce's own, so "
                                 "[[optimizer.wrappers]] (clip_by_global_norm) would not apply"),
              std::string::npos)
        << result.output;
  }
  EXPECT_FALSE(fs::exists(db)) << "no run row for a recipe error";
  const auto missing = run_orchestrate("run " + dir.write("m.toml", std::string(kRecipe) + "[dim_reduce]\nenabled = true\n") +
                                       " --db " + db + " --dry-run");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("enabled needs snapshots"), std::string::npos) << missing.output;
  // Both stages in one run need stage 1's snapshots, before stage 2's epoch.
  const std::string both = std::string(kRecipe) + "[dim_reduce]\nenabled = true\nfrom_epoch = 2\n";
  const auto no_snapshots = run_orchestrate("run " + dir.write("b.toml", both) + " --db " + db + " --set run.epochs=2");
  EXPECT_EQ(no_snapshots.exit_code, 2) << no_snapshots.output;
  EXPECT_NE(no_snapshots.output.find("[dim_reduce] from_epoch = 2 computes its PCA from this run's stage-1 snapshots, "
                                     "and [snapshots] saves none"),
            std::string::npos)
      << no_snapshots.output;
  const auto late = run_orchestrate("run " + dir.write("l.toml", both + "[snapshots]\nevery_steps = 2\nfrom_epoch = 2\n") +
                                    " --db " + db + " --set run.epochs=2");
  EXPECT_EQ(late.exit_code, 2) << late.output;
  EXPECT_NE(late.output.find("but [snapshots] from_epoch = 2: stage 1 would save no snapshot before stage 2 starts"),
            std::string::npos)
      << late.output;
  const auto never = run_orchestrate("run " + dir.write("n.toml", both + "[snapshots]\nevery_steps = 2\n") + " --db " +
                                     db + " --set run.epochs=1 --dry-run");
  EXPECT_EQ(never.exit_code, 2) << never.output;
  EXPECT_NE(never.output.find("is after the last epoch ([run] epochs = 1)"), std::string::npos) << never.output;
  EXPECT_FALSE(fs::exists(db)) << "no run row for a recipe error";
}

// [dim_reduce] from_epoch = 3: one run trains epochs 1-2 with the optimizer,
// saving snapshots, then computes the PCA of its own snapshots and trains
// epoch 3 in the subspace (recipes/dim_reduce.toml's shape, on a slice).
TEST(DimReduceTraining, BothStagesInOneRun) {
  ScratchDir dir;
  const std::string recipe = dir.write("both.toml", std::string(kRecipe) +
                                                        "[snapshots]\nevery_steps = 2\nkeep = 12\n"
                                                        "[dim_reduce]\nenabled = true\nfrom_epoch = 3\n"
                                                        "n_components = 8\nline_search_steps = 10\n");
  const std::string db = dir.file("runs.db");
  // Half the slice (16 updates an epoch): the switch is what is tested here.
  const auto result = run_orchestrate("run " + recipe + " --db " + db + " --set run.epochs=3 --set data.limit=1024");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  RunStore store(db, StoreAccess::read_only);
  const auto run = store.find_run("1");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "finished");
  // The PCA is computed between epoch 2's last snapshot (update 32) and the
  // next one (update 34): stage 2 starts with epoch 3, from 12 of the 16 snapshots.
  std::string sequence;
  for (const auto& event : store.events(1))
    if (event.kind == "dim_reduce" || event.kind == "snapshot") sequence += event.kind + ": " + event.message + "\n";
  const auto pca = sequence.find("dim_reduce: PCA of 12 weight snapshots");
  ASSERT_NE(pca, std::string::npos) << sequence;
  EXPECT_NE(sequence.rfind("weight snapshot at step 32:", pca), std::string::npos) << sequence;
  EXPECT_EQ(sequence.find("weight snapshot at step 34:"), sequence.find("weight snapshot at step", pca)) << sequence;
  EXPECT_TRUE(fs::exists(dir.file("artifacts/runs.db/run-1/pca_mat.safetensors")));
  EXPECT_EQ(run->final_metrics.count("train/dim_reduce_trials"), 1u) << "stage 2 took the last updates";
  EXPECT_EQ(store.step_timings(1).size(), 48u);
  EXPECT_TRUE(std::isfinite(run->final_metrics.at("eval/loss")));
  std::cout << "eval/top1 after both stages: " << run->final_metrics.at("eval/top1") << "\n";
}

// Stopped after 16 of its 32 updates and resumed from that checkpoint, stage
// 2 ends on the uninterrupted run's weights: the checkpoint holds the
// inverse Hessian, the last step and gradient, and the residual momentum.
void a_resumed_stage_two_ends_where_the_uninterrupted_one_does(Stages& s) {
  const std::string db = s.dir.file("resumed.db");
  const std::string stage2 = " --set run.epochs=1" + s.stage_two_settings();
  const auto stopped = run_orchestrate("run " + s.recipe + " --db " + db + stage2 +
                                       " --set hooks.0.plugin=stop_at_step --set hooks.0.step=16");
  ASSERT_EQ(stopped.exit_code, 0) << stopped.output;
  const auto resumed = run_orchestrate("run " + s.recipe + " --db " + db + stage2 + " --resume 1");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  RunStore store(db, StoreAccess::read_only);
  RunStore first(s.db, StoreAccess::read_only);
  const auto run = store.find_run("1");
  const auto uninterrupted = first.find_run("2");
  ASSERT_TRUE(run && uninterrupted);
  EXPECT_EQ(store.step_timings(1).size(), 32u);
  EXPECT_EQ(run->final_metrics.at("eval/loss"), uninterrupted->final_metrics.at("eval/loss")) << resumed.output;
  EXPECT_EQ(run->final_metrics.at("eval/top1"), uninterrupted->final_metrics.at("eval/top1"));
}

void too_few_snapshots_fail_the_run_saying_how_many_are_needed(Stages& s) {
  ASSERT_EQ(s.stage1.exit_code, 0) << s.stage1.output;
  const auto result = run_orchestrate("run " + s.recipe + " --db " + s.dir.file("few.db") +
                                      " --set run.max_steps=1 --set dim_reduce.enabled=true"
                                      " --set dim_reduce.n_components=20 --set dim_reduce.snapshots=" +
                                      s.snapshots());
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("n_components = 20 needs at least 21 weight snapshots, and " + s.snapshots() +
                               " (12 snapshots) has 12"),
            std::string::npos)
      << result.output;
}

TEST(DimReduceTraining, TwoStagesOnFashionMnist) {
  const auto stages = run_stages();
  ASSERT_EQ(stages->stage1.exit_code, 0) << stages->stage1.output;
  {
    SCOPED_TRACE("stage 1");
    stage_one_keeps_the_newest_snapshots_of_the_trainable_weights(*stages);
  }
  {
    SCOPED_TRACE("stage 2");
    stage_two_trains_in_the_pca_subspace_and_keeps_the_accuracy(*stages);
  }
  {
    SCOPED_TRACE("stage 2, two ranks");
    stage_two_runs_data_parallel_with_one_projection(*stages);
  }
  {
    SCOPED_TRACE("stage 2, stopped and resumed");
    a_resumed_stage_two_ends_where_the_uninterrupted_one_does(*stages);
  }
  {
    SCOPED_TRACE("too few snapshots");
    too_few_snapshots_fail_the_run_saying_how_many_are_needed(*stages);
  }
}

}  // namespace
}  // namespace orchestrate::testing

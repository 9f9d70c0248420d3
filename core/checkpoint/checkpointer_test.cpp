// The checkpoint policy alone: when a save is due (every N steps, every N
// epochs), that a position is saved once, and that only the newest keep_max
// checkpoints stay, on disk and in the run store.
#include "checkpoint/checkpointer.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <chrono>
#include <filesystem>

#include "checkpoint/resume.h"
#include "store/database_lock_testing.h"
#include "store/run_store_test_support.h"

namespace orchestrate {
namespace {

namespace fs = std::filesystem;

CheckpointContent content_at(std::int64_t step) {
  CheckpointContent c;
  c.meta.orchestrate_version = "0.1.0";
  c.meta.step = step;
  c.meta.epoch = 1;
  c.meta.reason = "interval";
  c.meta.created_at = "2026-11-28T10:00:00.000Z";
  c.meta.model = "lenet";
  c.weights.tensors = {{"w", at::full({2}, static_cast<float>(step))}};
  c.trainer_state = "state";
  c.recipe_toml = "schema_version = 1\n";
  return c;
}

TEST(Checkpointer, SavesWhenDueOncePerPositionAndKeepsTheNewest) {
  testing::ScratchRun run;
  CheckpointSettings settings;
  settings.every_steps = 5;
  settings.every_epochs = 2;
  settings.keep_max = 2;
  Checkpointer checkpointer(settings, run.dir.file("ck/run-1"), run.recorder);

  EXPECT_FALSE(checkpointer.due_after_update(4));
  EXPECT_EQ(checkpointer.due_after_update(10), "interval");
  EXPECT_EQ(checkpointer.due_after_update(3, /*time_due=*/true), "time");
  EXPECT_FALSE(checkpointer.due_by_time()) << "save_interval_secs = 0 is off";
  EXPECT_FALSE(checkpointer.due_after_epoch(1));
  EXPECT_TRUE(checkpointer.due_after_epoch(2));

  std::vector<std::string> paths;
  for (const std::int64_t step : {5, 10, 15}) paths.push_back(checkpointer.save(content_at(step)));
  EXPECT_TRUE(checkpointer.saved_at(15, 0));
  EXPECT_FALSE(checkpointer.saved_at(15, 1)) << "another micro-batch of the same update is another position";
  EXPECT_EQ(checkpointer.newest(), paths.back());
  EXPECT_FALSE(fs::exists(paths[0])) << "keep_max = 2 removes the oldest";
  EXPECT_TRUE(fs::exists(paths[1]));
  EXPECT_TRUE(fs::exists(paths[2]));
  run.store.flush();
  const auto recorded = run.store.checkpoints(run.id);
  ASSERT_EQ(recorded.size(), 2U) << "the store forgets the pruned one";
  EXPECT_EQ(recorded[0].step, 10);
  EXPECT_EQ(recorded[1].step, 15);
  EXPECT_EQ(recorded[1].path, paths[2]);
}


// The store knows of a checkpoint before its directory takes its name, so a
// kill -9 between the two leaves a row whose directory is missing, which
// --resume passes over for the one before it, never a checkpoint on disk that
// --resume cannot find ("run 1 has no checkpoint on disk", seen before the
// order was changed). A checkpoint the store cannot record is not published.
TEST(Checkpointer, RecordsACheckpointBeforePublishingIt) {
  testing::ScratchRun run;
  const std::string directory = run.dir.file("ck/run-1");
  Checkpointer checkpointer(CheckpointSettings{}, directory, run.recorder);
  const std::string first = checkpointer.save(content_at(4));
  ASSERT_FALSE(first.empty());

  CheckpointRecord killed_before_publishing;  // what a kill -9 between the two leaves
  killed_before_publishing.step = 8;
  killed_before_publishing.path = (fs::path(directory) / checkpoint_name(8, 0)).string();
  run.recorder.checkpoint(killed_before_publishing);
  run.store.flush();
  EXPECT_EQ(newest_checkpoint_of(run.store, run.id), first);

  const RunRecorder unknown_run(run.store, run.id + 1000);  // the store refuses its rows
  Checkpointer refused(CheckpointSettings{}, directory, unknown_run);
  EXPECT_EQ(refused.save(content_at(12)), "");
  EXPECT_EQ(checkpoints_in(directory), std::vector<std::string>{first}) << "step 12 was not published";
}

// A store that stays busy past its busy timeout cannot list the checkpoint,
// so it is not published (a kill would otherwise leave it on disk unknown to
// the store); training goes on, and the next save, once the store is free,
// is published and listed.
TEST(Checkpointer, PublishesNothingWhileTheStoreCannotListIt) {
  testing::ScratchRun run;
  run.store.set_busy_timeout(std::chrono::milliseconds(50));
  const std::string directory = run.dir.file("ck/run-1");
  Checkpointer checkpointer(CheckpointSettings{}, directory, run.recorder);
  const std::string first = checkpointer.save(content_at(4));
  ASSERT_FALSE(first.empty());

  testing::DatabaseLock lock(run.store.path());
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(checkpointer.save(content_at(8)), "");
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("checkpoint at step 8 not saved: run store "), std::string::npos) << said;
  EXPECT_NE(said.find("database is locked"), std::string::npos) << said;
  EXPECT_EQ(checkpoints_in(directory), std::vector<std::string>{first}) << "step 8 was not published";
  EXPECT_EQ(checkpointer.newest(), first);

  lock.release();
  const std::string third = checkpointer.save(content_at(12));
  ASSERT_FALSE(third.empty());
  run.store.flush();
  std::vector<std::string> listed;
  for (const auto& row : run.store.checkpoints(run.id)) listed.push_back(row.path);
  EXPECT_EQ(listed, (std::vector<std::string>{first, third}));
  EXPECT_EQ(checkpoints_in(directory), listed);
  bool failure_recorded = false;
  for (const auto& event : run.store.events(run.id)) failure_recorded |= event.kind == "checkpoint_failed";
  EXPECT_TRUE(failure_recorded) << "the skipped save is an event of the run, written once the store is free";
}

}  // namespace
}  // namespace orchestrate

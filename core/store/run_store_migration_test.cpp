// Upgrading a run store: every earlier schema is migrated in place, once,
// with its rows intact.
#include <chrono>
#include <cmath>
#include <regex>

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include "orchestrate/testing/scratch_dir.h"
#include "run_store_sql.h"
#include "store/run_store.h"
#include "store/run_store_schema.h"
#include "store/first_release_store.h"
#include "store/run_store_test_support.h"

namespace orchestrate {
using testing::error_message_of;
using testing::sample_run;
using testing::ScratchDir;
using testing::step_number;
namespace {

TEST(RunStoreMigrationTest, UpgradesAVersion1StoreInPlace) {
  ScratchDir dir;
  const std::string path = dir.file("v1.db");
  // A finished run and one that was running when its process died.
  testing::write_first_release_store(
      path, "INSERT INTO runs (id, name, status, host, started_at, ended_at) VALUES"
            " (1, 'old', 'finished', 'node7', '2024-05-01T10:00:00.000Z', '2024-05-01T11:00:00.000Z'),"
            " (2, 'crashed', 'running', 'node7', '2024-05-02T10:00:00.000Z', NULL);"
            "INSERT INTO metrics (run_id, step, epoch, name, value, recorded_at) VALUES"
            " (1, 100, 1, 'eval/top1', 0.75, '2024-05-01T11:00:00.000Z')");

  RunStore store(path);
  SQLite::Database raw(path);
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), latest_schema_version());
  EXPECT_GE(latest_schema_version(), 2);

  const auto old = store.find_run("1");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->status, "finished");
  EXPECT_DOUBLE_EQ(old->duration_s, 3600.0);
  EXPECT_DOUBLE_EQ(old->final_metrics.at("eval/top1"), 0.75);
  EXPECT_EQ(old->pid, 0) << "rows from before migration 2 have no pid";
  EXPECT_EQ(old->resumed_count, 0);

  const auto crashed = store.find_run("2");
  ASSERT_TRUE(crashed.has_value());
  EXPECT_EQ(crashed->status, "lost") << "a v1 run left running long ago never beat: lost";
  EXPECT_EQ(crashed->last_seen_at, "2024-05-02T10:00:00.000Z") << "never beat: last seen when it started";
  EXPECT_EQ(crashed->ended_at, "");
  EXPECT_DOUBLE_EQ(crashed->duration_s, 0.0);

  // The new tables work on the upgraded file, also for the old runs.
  CheckpointRecord checkpoint;
  checkpoint.run_id = 1;
  checkpoint.path = "old/step100.pt";
  checkpoint.step = 100;
  store.record_checkpoint(checkpoint);
  EXPECT_EQ(store.checkpoints(1).size(), 1u);
  store.record_tensors(1, {{"fc.weight", "[10, 512]", "excluded", ""}});
  EXPECT_EQ(store.tensors(1).size(), 1u);
  const auto id = store.begin_run(sample_run("new"));
  EXPECT_EQ(store.find_run(std::to_string(id))->status, "running");
}

// From every earlier schema version to the current one: a store that stopped
// at migration k, holding a finished run with a step row, a metric and an
// event, opens with every row intact and the later columns at their
// "recorded before" values, and takes new runs.
class EveryEarlierSchema : public ::testing::TestWithParam<int> {};

TEST_P(EveryEarlierSchema, UpgradesWithItsRowsIntact) {
  const int version = GetParam();
  ASSERT_LT(version, latest_schema_version());
  ScratchDir dir;
  const std::string path = dir.file("v" + std::to_string(version) + ".db");
  {
    const auto migrations = parse_schema_migrations(kRunStoreSql);
    SQLite::Database old(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    for (int m = 0; m < version; ++m) old.exec(migrations.at(static_cast<std::size_t>(m)).sql);
    old.exec("PRAGMA user_version = " + std::to_string(version));
    old.exec("PRAGMA application_id = " + std::to_string(kRunStoreApplicationId));
    // Only columns that migration 1 created, so the same rows fit every version.
    old.exec("INSERT INTO runs (id, name, status, host, started_at, ended_at) VALUES"
             " (1, 'old', 'finished', 'node7', '2024-05-01T10:00:00.000Z', '2024-05-01T11:00:00.000Z')");
    old.exec("INSERT INTO step_timings (run_id, step, epoch, images, data_wait_s, compute_s, sync_s, optimizer_s,"
             " total_s, loss, learning_rate) VALUES (1, 7, 1, 64, 0.01, 0.2, 0.03, 0.04, 0.3, 1.5, 0.1)");
    old.exec("INSERT INTO metrics (run_id, step, epoch, name, value, recorded_at) VALUES"
             " (1, 7, 1, 'eval/top1', 0.75, '2024-05-01T11:00:00.000Z')");
    old.exec("INSERT INTO events (run_id, time, kind, message) VALUES"
             " (1, '2024-05-01T10:30:00.000Z', 'note', 'kept')");
  }

  RunStore store(path);
  EXPECT_EQ(SQLite::Database(path).execAndGet("PRAGMA user_version").getInt(), latest_schema_version());
  const auto run = store.find_run("1");
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->name, "old");
  EXPECT_EQ(run->status, "finished");
  EXPECT_EQ(run->kind, "train");
  EXPECT_EQ(run->source_run_id, 0);
  EXPECT_TRUE(run->tags.empty());
  EXPECT_DOUBLE_EQ(run->final_metrics.at("eval/top1"), 0.75);
  const auto steps = store.step_timings(1);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].step, 7);
  EXPECT_EQ(steps[0].images, 64);
  EXPECT_DOUBLE_EQ(steps[0].sync_s, 0.03);
  EXPECT_DOUBLE_EQ(steps[0].total_s, 0.3);
  EXPECT_EQ(steps[0].rank, 0) << "rows before migration 4 are one process's";
  EXPECT_EQ(steps[0].bytes_sent, 0) << "rows before migration 5 sent nothing recorded";
  const auto events = store.events(1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].message, "kept");
  const auto id = store.begin_run(sample_run("new"));
  EXPECT_EQ(store.find_run(std::to_string(id))->status, "running");
}

std::vector<int> earlier_schema_versions() {
  std::vector<int> versions;
  for (int v = 1; v < latest_schema_version(); ++v) versions.push_back(v);
  return versions;
}

INSTANTIATE_TEST_SUITE_P(FromVersion, EveryEarlierSchema, ::testing::ValuesIn(earlier_schema_versions()));

TEST(RunStoreMigrationTest, UpgradesAVersion2StoreInPlaceAndOnlyOnce) {
  ScratchDir dir;
  const std::string path = dir.file("v2.db");
  {
    // A store as migration 2 left it, with a finished run and its checkpoint.
    const auto migrations = parse_schema_migrations(kRunStoreSql);
    SQLite::Database v2(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    v2.exec(migrations.at(0).sql);
    v2.exec(migrations.at(1).sql);
    v2.exec("PRAGMA user_version = 2");
    v2.exec("PRAGMA application_id = " + std::to_string(kRunStoreApplicationId));
    v2.exec("INSERT INTO runs (id, name, status, host, started_at, ended_at) VALUES"
            " (1, 'old', 'finished', 'node7', '2024-05-01T10:00:00.000Z', '2024-05-01T11:00:00.000Z')");
    v2.exec("INSERT INTO checkpoints (run_id, step, epoch, path, created_at) VALUES"
            " (1, 100, 1, 'old/step-00000100', '2024-05-01T11:00:00.000Z')");
  }

  {
    RunStore store(path);
    const auto old = store.find_run("1");
    ASSERT_TRUE(old.has_value());
    EXPECT_EQ(old->kind, "train") << "every run before migration 3 trained";
    EXPECT_EQ(old->source_run_id, 0);
    EXPECT_EQ(store.checkpoints(1).size(), 1u);

    RunRecord eval = sample_run("old_eval");
    eval.kind = RunKind::eval;
    eval.source_run_id = 1;
    const auto id = store.begin_run(eval);
    store.finish_run(id, RunStatus::finished);
  }
  // Opened again, the migrated file is left as it is: nothing is applied twice.
  RunStore again(path);
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), latest_schema_version());
  EXPECT_GE(latest_schema_version(), 3);
  const auto runs = again.list_runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].kind, "eval");
  EXPECT_EQ(runs[0].source_run_id, 1);
  EXPECT_EQ(runs[1].kind, "train");

  // Deleting the source keeps the eval run, unlinked.
  raw.exec("PRAGMA foreign_keys = ON");
  raw.exec("DELETE FROM runs WHERE id = 1");
  EXPECT_EQ(again.find_run(std::to_string(runs[0].id))->source_run_id, 0);
}

}  // namespace
}  // namespace orchestrate

#include "store/run_store.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include "orchestrate/error.h"
#include "orchestrate/testing/scratch_dir.h"
#include "store/run_store_schema.h"
#include "store/run_store_test_support.h"

namespace orchestrate {
using testing::error_message_of;
using testing::sample_run;
using testing::ScratchDir;
using testing::step_number;
namespace {

TEST(RunStoreTest, RoundTripsARunWithStepsMetricsAndEvents) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  std::int64_t id = 0;
  {
    RunStore store(path);
    EXPECT_EQ(store.path(), path);
    id = store.begin_run(sample_run());
    for (std::int64_t step = 0; step < 3; ++step) store.record_step(id, step_number(step));
    StepTiming diverged = step_number(3);
    diverged.loss = std::nan("");
    store.record_step(id, diverged);
    store.record_metric(id, 3, 0, "train/loss", 2.25);
    store.record_metric(id, 3, 0, "eval/top1", 0.5);
    store.record_event(id, "checkpoint", "saved checkpoints/step3.pt");
    store.finish_run(id, RunStatus::finished);
  }

  RunStore store(path);
  const auto run = store.find_run(std::to_string(id));
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->id, id);
  EXPECT_EQ(run->name, "resnet50_lars");
  EXPECT_EQ(run->status, "finished");
  EXPECT_EQ(run->device, "cuda:0");
  EXPECT_EQ(run->error, "");
  const std::regex iso_utc(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  EXPECT_TRUE(std::regex_match(run->started_at, iso_utc)) << run->started_at;
  EXPECT_TRUE(std::regex_match(run->ended_at, iso_utc)) << run->ended_at;
  EXPECT_GE(run->duration_s, 0.0);
  EXPECT_LT(run->duration_s, 60.0);
  EXPECT_EQ(run->final_metrics, (std::map<std::string, double>{{"eval/top1", 0.5}, {"train/loss", 2.25}}));
  EXPECT_EQ(store.resolved_recipe(id), sample_run().resolved_recipe);

  const auto timings = store.step_timings(id);
  ASSERT_EQ(timings.size(), 4u);
  for (std::int64_t step = 0; step < 3; ++step) {
    const StepTiming expected = step_number(step);
    const StepTiming& actual = timings[static_cast<std::size_t>(step)];
    EXPECT_EQ(actual.step, expected.step);
    EXPECT_EQ(actual.epoch, expected.epoch);
    EXPECT_EQ(actual.images, expected.images);
    EXPECT_DOUBLE_EQ(actual.data_wait_s, expected.data_wait_s);
    EXPECT_DOUBLE_EQ(actual.compute_s, expected.compute_s);
    EXPECT_DOUBLE_EQ(actual.sync_s, expected.sync_s);
    EXPECT_DOUBLE_EQ(actual.optimizer_s, expected.optimizer_s);
    EXPECT_DOUBLE_EQ(actual.total_s, expected.total_s);
    EXPECT_DOUBLE_EQ(actual.loss, expected.loss);
    EXPECT_DOUBLE_EQ(actual.learning_rate, expected.learning_rate);
  }
  EXPECT_TRUE(std::isnan(timings[3].loss)) << "a NaN loss must read back as NaN";

  // Plugins, params and events have no read API yet; check the rows directly.
  SQLite::Database raw(path);
  SQLite::Statement plugins(raw, "SELECT name, version, library_path, sha256 FROM run_plugins WHERE run_id = ? ORDER BY name");
  plugins.bind(1, id);
  ASSERT_TRUE(plugins.executeStep());
  EXPECT_EQ(plugins.getColumn(0).getString(), "lars");
  EXPECT_EQ(plugins.getColumn(1).getString(), "1.0.0");
  EXPECT_EQ(plugins.getColumn(2).getString(), "/opt/orchestrate/plugins/liblars.so");
  EXPECT_EQ(plugins.getColumn(3).getString(), "ab12");
  ASSERT_TRUE(plugins.executeStep());
  EXPECT_EQ(plugins.getColumn(0).getString(), "resnet");
  EXPECT_EQ(plugins.getColumn(3).getString(), "");
  EXPECT_FALSE(plugins.executeStep());

  SQLite::Statement params(raw, "SELECT value FROM run_params WHERE run_id = ? AND key = 'optimizer.lr'");
  params.bind(1, id);
  ASSERT_TRUE(params.executeStep());
  EXPECT_EQ(params.getColumn(0).getString(), "0.2");

  SQLite::Statement run_row(raw, "SELECT recipe_path, orchestrate_version, torch_version, host, world_size, git_revision FROM runs WHERE id = ?");
  run_row.bind(1, id);
  ASSERT_TRUE(run_row.executeStep());
  EXPECT_EQ(run_row.getColumn(0).getString(), "recipes/resnet50_32k_lars.toml");
  EXPECT_EQ(run_row.getColumn(1).getString(), "0.1.0");
  EXPECT_EQ(run_row.getColumn(2).getString(), "2.11.0");
  EXPECT_EQ(run_row.getColumn(3).getString(), "node7");
  EXPECT_EQ(run_row.getColumn(4).getInt(), 8);
  EXPECT_EQ(run_row.getColumn(5).getString(), "c99775a");

  SQLite::Statement events(raw, "SELECT kind, message, time FROM events WHERE run_id = ?");
  events.bind(1, id);
  ASSERT_TRUE(events.executeStep());
  EXPECT_EQ(events.getColumn(0).getString(), "checkpoint");
  EXPECT_EQ(events.getColumn(1).getString(), "saved checkpoints/step3.pt");
  EXPECT_TRUE(std::regex_match(events.getColumn(2).getString(), iso_utc));
  EXPECT_FALSE(events.executeStep());
}

TEST(RunStoreTest, KeepsOnePeakPerHostDevicePrecisionAndThreads) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  {
    RunStore store(path);
    EXPECT_FALSE(store.device_peak("node7", "AMD EPYC 7B13", "fp32", 2));
    store.record_device_peak({"node7", "AMD EPYC 7B13", "fp32", 2, 90e9, "1024x1024 fp32 matmul, best of 9", ""});
    store.record_device_peak({"node7", "AMD EPYC 7B13", "fp32", 1, 48e9, "1 thread", ""});
    store.record_device_peak({"node7", "AMD EPYC 7B13", "fp32", 2, 95e9, "measured again", ""});  // replaces
  }
  const RunStore store(path, StoreAccess::read_only);
  const auto two_threads = store.device_peak("node7", "AMD EPYC 7B13", "fp32", 2);
  ASSERT_TRUE(two_threads);
  EXPECT_EQ(two_threads->flops_per_s, 95e9);
  EXPECT_EQ(two_threads->method, "measured again");
  EXPECT_EQ(two_threads->measured_at.size(), std::string("2025-01-31T12:00:00.123Z").size());
  EXPECT_EQ(store.device_peak("node7", "AMD EPYC 7B13", "fp32", 1)->flops_per_s, 48e9);
  EXPECT_FALSE(store.device_peak("node7", "AMD EPYC 7B13", "bf16", 2));
  EXPECT_FALSE(store.device_peak("node8", "AMD EPYC 7B13", "fp32", 2));

  const auto node7 = store.device_peaks("node7");  // what `orchestrate env` lists
  ASSERT_EQ(node7.size(), 2U);
  EXPECT_EQ(node7[0].threads, 1);
  EXPECT_EQ(node7[0].flops_per_s, 48e9);
  EXPECT_EQ(node7[1].threads, 2);
  EXPECT_EQ(node7[1].method, "measured again");
  EXPECT_TRUE(store.device_peaks("node8").empty());
}

TEST(RunStoreTest, FinalMetricIsTheValueAtTheHighestStep) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  const auto id = store.begin_run(sample_run());
  store.record_metric(id, 10, 1, "eval/top1", 0.7);
  store.record_metric(id, 5, 0, "eval/top1", 0.4);   // recorded late, but an earlier step
  store.record_metric(id, 10, 1, "eval/top5", 0.8);
  store.record_metric(id, 10, 1, "eval/top5", 0.9);  // same step: the later record wins
  const auto run = store.find_run(std::to_string(id));
  ASSERT_TRUE(run.has_value());
  EXPECT_DOUBLE_EQ(run->final_metrics.at("eval/top1"), 0.7);
  EXPECT_DOUBLE_EQ(run->final_metrics.at("eval/top5"), 0.9);
}

TEST(RunStoreTest, StepsAreBatchedAndVisibleAfterABatchOrFlush) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  RunStore reader(dir.file("runs.db"));  // another connection, as another process would see it
  const auto id = store.begin_run(sample_run());

  for (std::int64_t step = 0; step < 199; ++step) store.record_step(id, step_number(step));
  EXPECT_EQ(reader.step_timings(id).size(), 0u) << "steps must be buffered, not committed one by one";
  store.record_step(id, step_number(199));
  EXPECT_EQ(reader.step_timings(id).size(), 200u) << "a full batch of 200 is written at once";
  store.record_step(id, step_number(200));
  EXPECT_EQ(reader.step_timings(id).size(), 200u);
  store.flush();
  EXPECT_EQ(reader.step_timings(id).size(), 201u);
  store.flush();  // nothing buffered: a no-op
  EXPECT_EQ(reader.step_timings(id).size(), 201u);
}

TEST(RunStoreTest, FinishRunWritesBufferedSteps) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  const auto id = store.begin_run(sample_run());
  for (std::int64_t step = 0; step < 5; ++step) store.record_step(id, step_number(step));
  store.finish_run(id, RunStatus::finished);
  EXPECT_EQ(RunStore(dir.file("runs.db")).step_timings(id).size(), 5u);
}

TEST(RunStoreTest, DestroyingTheStoreWithoutFinishKeepsBufferedSteps) {
  ScratchDir dir;
  std::int64_t id = 0;
  {
    RunStore store(dir.file("runs.db"));
    id = store.begin_run(sample_run());
    for (std::int64_t step = 0; step < 5; ++step) store.record_step(id, step_number(step));
  }
  RunStore store(dir.file("runs.db"));
  EXPECT_EQ(store.step_timings(id).size(), 5u);
  EXPECT_EQ(store.find_run(std::to_string(id))->status, "running");
  EXPECT_EQ(store.find_run(std::to_string(id))->ended_at, "");
}

TEST(RunStoreTest, MovedStoreKeepsItsBufferedSteps) {
  ScratchDir dir;
  std::int64_t id = 0;
  {
    RunStore first(dir.file("runs.db"));
    id = first.begin_run(sample_run());
    first.record_step(id, step_number(0));
    RunStore second = std::move(first);
    second.record_step(id, step_number(1));
  }
  EXPECT_EQ(RunStore(dir.file("runs.db")).step_timings(id).size(), 2u);
}

TEST(RunStoreTest, StatusGoesFromRunningToOneFinalStatus) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  const auto id = store.begin_run(sample_run());
  auto status = [&] { return store.find_run(std::to_string(id))->status; };
  EXPECT_EQ(status(), "running");

  store.finish_run(id, RunStatus::failed, "CUDA out of memory");
  EXPECT_EQ(status(), "failed");
  EXPECT_EQ(store.find_run(std::to_string(id))->error, "CUDA out of memory");
  EXPECT_NE(store.find_run(std::to_string(id))->ended_at, "");

  const std::string again = error_message_of([&] { store.finish_run(id, RunStatus::finished); });
  EXPECT_NE(again.find("already ended (status failed)"), std::string::npos) << again;
  EXPECT_EQ(status(), "failed");

  const auto second = store.begin_run(sample_run());
  const std::string running = error_message_of([&] { store.finish_run(second, RunStatus::running); });
  EXPECT_NE(running.find("finished, failed or interrupted"), std::string::npos) << running;
  store.finish_run(second, RunStatus::interrupted);
  EXPECT_EQ(store.find_run(std::to_string(second))->status, "interrupted");

  const std::string unknown = error_message_of([&] { store.finish_run(999, RunStatus::finished); });
  EXPECT_NE(unknown.find("no run 999"), std::string::npos) << unknown;
}

TEST(RunStoreTest, StatusNamesMatchTheSchema) {
  EXPECT_STREQ(to_string(RunStatus::running), "running");
  EXPECT_STREQ(to_string(RunStatus::finished), "finished");
  EXPECT_STREQ(to_string(RunStatus::failed), "failed");
  EXPECT_STREQ(to_string(RunStatus::interrupted), "interrupted");
  EXPECT_STREQ(to_string(RunStatus::lost), "lost");  // read-time only, not in the schema's CHECK
}

TEST(RunStoreTest, FindsRunsByIdOrNewestWithAName) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  const auto old_a = store.begin_run(sample_run("a"));
  const auto b = store.begin_run(sample_run("b"));
  const auto new_a = store.begin_run(sample_run("a"));
  const auto named_42 = store.begin_run(sample_run("42"));

  EXPECT_EQ(store.find_run("a")->id, new_a);
  EXPECT_EQ(store.find_run("b")->id, b);
  EXPECT_EQ(store.find_run(std::to_string(old_a))->id, old_a);
  EXPECT_EQ(store.find_run(std::to_string(old_a))->name, "a");
  EXPECT_EQ(store.find_run("42")->id, named_42) << "a number that is no run id falls back to the name";
  EXPECT_FALSE(store.find_run("c").has_value());
  EXPECT_FALSE(store.find_run("999").has_value());
  EXPECT_FALSE(store.find_run("").has_value());
}

TEST(RunStoreTest, AnEvalRunRecordsItsKindAndTheRunItDerivesFrom) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  RunStore store(path);
  const auto trained = store.begin_run(sample_run("trained"));
  RunRecord eval = sample_run("trained_eval");
  eval.kind = RunKind::eval;
  eval.source_run_id = trained;
  const auto evaluated = store.begin_run(eval);
  RunRecord of_file = sample_run("file_eval");
  of_file.kind = RunKind::eval;
  const auto unlinked = store.begin_run(of_file);

  EXPECT_EQ(store.find_run(std::to_string(trained))->kind, "train");
  EXPECT_EQ(store.find_run(std::to_string(trained))->source_run_id, 0);
  EXPECT_EQ(store.find_run(std::to_string(evaluated))->kind, "eval");
  EXPECT_EQ(store.find_run(std::to_string(evaluated))->source_run_id, trained);
  EXPECT_EQ(store.find_run(std::to_string(unlinked))->source_run_id, 0);
  EXPECT_EQ(store.list_runs(1).front().kind, "eval");
  SQLite::Database raw(path);
  EXPECT_TRUE(raw.execAndGet("SELECT source_run_id FROM runs WHERE id = " + std::to_string(unlinked)).isNull())
      << "no source is NULL, not run 0";

  RunRecord dangling = sample_run("dangling");
  dangling.source_run_id = 999;
  const std::string message = error_message_of([&] { store.begin_run(dangling); });
  EXPECT_NE(message.find("FOREIGN KEY"), std::string::npos) << message;
  EXPECT_EQ(store.list_runs().size(), 3u) << "a refused run leaves no row";
}

TEST(RunStoreTest, KindNamesMatchTheSchema) {
  EXPECT_STREQ(to_string(RunKind::train), "train");  // the column's default
  EXPECT_STREQ(to_string(RunKind::eval), "eval");
}

TEST(RunStoreTest, ListsRunsNewestFirstUpToALimit) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  EXPECT_TRUE(store.list_runs().empty());
  std::vector<std::int64_t> ids;
  for (const char* name : {"first", "second", "third"}) ids.push_back(store.begin_run(sample_run(name)));
  store.record_metric(ids[1], 1, 0, "eval/top1", 0.25);

  const auto all = store.list_runs();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].name, "third");
  EXPECT_EQ(all[1].name, "second");
  EXPECT_EQ(all[2].name, "first");
  EXPECT_DOUBLE_EQ(all[1].final_metrics.at("eval/top1"), 0.25);
  EXPECT_TRUE(all[0].final_metrics.empty());

  const auto newest_two = store.list_runs(2);
  ASSERT_EQ(newest_two.size(), 2u);
  EXPECT_EQ(newest_two[0].id, ids[2]);
  EXPECT_EQ(newest_two[1].id, ids[1]);
}

TEST(RunStoreTest, UnknownRunIsAnErrorNamingTheFile) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  RunStore store(path);
  const std::string recipe = error_message_of([&] { store.resolved_recipe(7); });
  EXPECT_NE(recipe.find(path), std::string::npos) << recipe;
  EXPECT_NE(recipe.find("no run 7"), std::string::npos) << recipe;

  const std::string metric = error_message_of([&] { store.record_metric(7, 0, 0, "train/loss", 1.0); });
  EXPECT_NE(metric.find(path), std::string::npos) << metric;
  EXPECT_NE(metric.find("FOREIGN KEY"), std::string::npos) << metric;

  // A batch naming an unknown run fails once and is dropped, so the store
  // stays usable and its destructor has nothing left to fail on.
  store.record_step(7, step_number(0));
  EXPECT_THROW(store.flush(), Error);
  EXPECT_NO_THROW(store.flush());
}

TEST(RunStoreTest, CreatesMissingParentDirectories) {
  ScratchDir dir;
  const std::string path = dir.file("a/b/runs.db");
  RunStore store(path);
  store.begin_run(sample_run());
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST(RunStoreTest, UsesWriteAheadLogAndIsMarkedAsOurs) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  { RunStore store(path); }
  SQLite::Database raw(path);
  EXPECT_EQ(raw.execAndGet("PRAGMA journal_mode").getString(), "wal");
  EXPECT_EQ(raw.execAndGet("PRAGMA application_id").getInt(), kRunStoreApplicationId);
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), latest_schema_version());
}

TEST(RunStoreTest, RefusesAFileThatIsNotADatabase) {
  ScratchDir dir;
  const std::string path = dir.file("notes.db");
  const std::string garbage = "these are not the bytes of a SQLite database, just some notes\n";
  { std::ofstream(path, std::ios::binary) << std::string(50, '\x7f') << garbage << std::string(4096, 'x'); }
  const auto size_before = std::filesystem::file_size(path);

  const std::string message = error_message_of([&] { RunStore store(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("not a database"), std::string::npos) << message;
  EXPECT_EQ(std::filesystem::file_size(path), size_before) << "a refused file must be left alone";
}

TEST(RunStoreTest, RefusesAnotherApplicationsDatabase) {
  ScratchDir dir;
  const std::string path = dir.file("other.db");
  {
    SQLite::Database other(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    other.exec("CREATE TABLE photos (id INTEGER PRIMARY KEY)");
  }
  const std::string message = error_message_of([&] { RunStore store(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("not an orchestrate run store"), std::string::npos) << message;
}

TEST(RunStoreTest, RefusesANewerSchema) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  { RunStore store(path); }
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA user_version = " + std::to_string(latest_schema_version() + 1));
  }
  const std::string message = error_message_of([&] { RunStore store(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("newer than this orchestrate"), std::string::npos) << message;
}

TEST(RunStoreTest, DefaultPathComesFromTheEnvironment) {
  const char* saved = std::getenv("ORCHESTRATE_DB");
  const std::string restore = saved ? saved : "";
  ::setenv("ORCHESTRATE_DB", "/data/experiments.db", 1);
  EXPECT_EQ(RunStore::default_path(), "/data/experiments.db");
  ::setenv("ORCHESTRATE_DB", "", 1);
  EXPECT_EQ(RunStore::default_path(), "orchestrate.db");
  ::unsetenv("ORCHESTRATE_DB");
  EXPECT_EQ(RunStore::default_path(), "orchestrate.db");
  if (saved) ::setenv("ORCHESTRATE_DB", restore.c_str(), 1);
}

TEST(SchemaMigrationsTest, SplitsAtNumberedMarkers) {
  const auto migrations = parse_schema_migrations(
      "-- header comment\n-- migration: 1\nCREATE TABLE a (x);\n-- migration: 2\nCREATE TABLE b (y);\n");
  ASSERT_EQ(migrations.size(), 2u);
  EXPECT_EQ(migrations[0].version, 1);
  EXPECT_EQ(migrations[0].sql, "CREATE TABLE a (x);\n");
  EXPECT_EQ(migrations[1].version, 2);
  EXPECT_EQ(migrations[1].sql, "CREATE TABLE b (y);\n");
  EXPECT_GE(latest_schema_version(), 1);
}

TEST(SchemaMigrationsTest, RefusesGapsAndMissingMarkers) {
  EXPECT_THROW(parse_schema_migrations("-- migration: 1\nA;\n-- migration: 3\nB;\n"), Error);
  EXPECT_THROW(parse_schema_migrations("-- migration: one\nA;\n"), Error);
  EXPECT_THROW(parse_schema_migrations("CREATE TABLE a (x);\n"), Error);
}

}  // namespace
}  // namespace orchestrate

// Checkpoints, resume and crash detection in the run store: what a user
// relies on when a run dies or is resumed. Upgrades: run_store_migration_test.cpp.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <regex>
#include <thread>

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include "orchestrate/testing/scratch_dir.h"
#include "run_store_sql.h"
#include "store/run_liveness.h"
#include "store/run_store.h"
#include "store/run_store_schema.h"
#include "store/run_store_test_support.h"

namespace orchestrate {
using testing::error_message_of;
using testing::sample_run;
using testing::ScratchDir;
using testing::step_number;
namespace {

const std::regex kIsoUtc(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");

// The id of a process that existed and is gone: a child that exited and was reaped.
std::int64_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

RunRecord run_on_this_host(const std::string& name = "here") {
  RunRecord run = sample_run(name);
  run.host = this_host_name();
  return run;
}

// Rewrites a run's row as a crashed process would have left it.
void set_run_row(const std::string& path, std::int64_t id, const std::string& assignments) {
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  raw.exec("UPDATE runs SET " + assignments + " WHERE id = " + std::to_string(id));
}

// Polls `done` for up to `limit`: generous, so a loaded machine does not fail a test.
template <class Done>
bool eventually(Done&& done, std::chrono::seconds limit = std::chrono::seconds(10)) {
  const auto give_up_at = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < give_up_at) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

TEST(RunStoreLivenessTest, BeginRunRecordsThisProcessAndAHeartbeat) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  const auto id = store.begin_run(run_on_this_host());
  const auto run = store.find_run(std::to_string(id));
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->status, "running") << "the running run of this very process is not lost";
  EXPECT_EQ(run->pid, static_cast<std::int64_t>(::getpid()));
  EXPECT_EQ(run->host, this_host_name());
  EXPECT_TRUE(std::regex_match(run->last_seen_at, kIsoUtc)) << run->last_seen_at;
  EXPECT_GE(run->last_seen_at, run->started_at);

  store.finish_run(id, RunStatus::finished);
  const auto ended = store.find_run(std::to_string(id));
  EXPECT_EQ(ended->status, "finished");
  EXPECT_EQ(ended->last_seen_at, ended->ended_at) << "a run is last seen when it ends";
}

TEST(RunStoreLivenessTest, ARunWhosePidIsGoneOnThisHostIsLostAtOnce) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  std::int64_t id = 0;
  {
    RunStore crashed(path);
    id = crashed.begin_run(run_on_this_host("crashed"));
    for (std::int64_t step = 0; step < 5; ++step) crashed.record_step(id, step_number(step));
  }  // the store goes without finish_run, as in a crash
  // The heartbeat is fresh: only the missing process tells.
  set_run_row(path, id, "pid = " + std::to_string(dead_pid()));

  RunStore reader(path);
  const auto run = reader.find_run(std::to_string(id));
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->status, "lost");
  EXPECT_EQ(run->ended_at, "");
  EXPECT_TRUE(std::regex_match(run->last_seen_at, kIsoUtc)) << run->last_seen_at;
  EXPECT_EQ(reader.list_runs().at(0).status, "lost") << "`orchestrate runs` shows it too";
  EXPECT_EQ(reader.step_timings(id).size(), 5u);
}

TEST(RunStoreLivenessTest, ARunWithAStaleHeartbeatIsLostOnAnyHost) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  RunStore store(path);
  // On another host (its pid cannot be checked here), alive by its pid if it were checked.
  const auto stale = store.begin_run(sample_run("elsewhere"));
  set_run_row(path, stale,
              "started_at = '2025-01-31T12:00:00.000Z', heartbeat_at = '2025-01-31T12:01:40.500Z'");
  const auto fresh = store.begin_run(sample_run("elsewhere_alive"));

  const auto run = store.find_run(std::to_string(stale));
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->status, "lost");
  EXPECT_EQ(run->host, "node7");
  EXPECT_EQ(run->last_seen_at, "2025-01-31T12:01:40.500Z");
  EXPECT_EQ(run->ended_at, "");
  EXPECT_NEAR(run->duration_s, 100.5, 1e-6) << "a lost run lasted until it was last seen, not until now";

  EXPECT_EQ(store.find_run(std::to_string(fresh))->status, "running") << "a fresh heartbeat elsewhere is running";
}

TEST(RunStoreLivenessTest, HeartbeatAndStepsAreWrittenByTimeWithoutAFlush) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  RunStore store(path);
  store.set_flush_interval(std::chrono::duration<double>(0.1));
  RunStore reader(path);  // another connection, as `orchestrate runs` in another process
  const auto id = store.begin_run(sample_run());
  const std::string first_seen = reader.find_run(std::to_string(id))->last_seen_at;
  for (std::int64_t step = 0; step < 5; ++step) store.record_step(id, step_number(step));

  EXPECT_TRUE(eventually([&] { return reader.step_timings(id).size() == 5; }))
      << "buffered steps must reach the file within a few flush intervals";
  EXPECT_TRUE(eventually([&] { return reader.find_run(std::to_string(id))->last_seen_at > first_seen; }))
      << "the heartbeat must advance while the training thread records nothing";

  store.finish_run(id, RunStatus::finished);
  const std::string ended_seen = reader.find_run(std::to_string(id))->last_seen_at;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(reader.find_run(std::to_string(id))->last_seen_at, ended_seen) << "an ended run no longer beats";
}

TEST(RunStoreLivenessTest, FlushIntervalMustBePositive) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  EXPECT_THROW(store.set_flush_interval(std::chrono::duration<double>(0)), Error);
  EXPECT_THROW(store.set_flush_interval(std::chrono::duration<double>(-1)), Error);
  EXPECT_NO_THROW(store.set_flush_interval(std::chrono::duration<double>(2.5)));
}

TEST(RunStoreLivenessTest, FinishRunRefusesLostAsAStatus) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  const auto id = store.begin_run(sample_run());
  const std::string message = error_message_of([&] { store.finish_run(id, RunStatus::lost); });
  EXPECT_NE(message.find("finished, failed or interrupted"), std::string::npos) << message;
  EXPECT_EQ(store.find_run(std::to_string(id))->status, "running");
}

TEST(RunStoreLivenessTest, MovedStoreKeepsBeatingAndStopsCleanly) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  RunStore reader(path);
  std::int64_t id = 0;
  {
    RunStore first(path);
    first.set_flush_interval(std::chrono::duration<double>(0.05));
    id = first.begin_run(sample_run());
    RunStore second = std::move(first);
    second.record_step(id, step_number(0));
    EXPECT_TRUE(eventually([&] { return reader.step_timings(id).size() == 1; }));
    RunStore third(dir.file("other.db"));
    third = std::move(second);  // the other store's thread-less insides go; this run's thread goes on
    third.record_step(id, step_number(1));
    EXPECT_TRUE(eventually([&] { return reader.step_timings(id).size() == 2; }));
  }
  EXPECT_EQ(reader.step_timings(id).size(), 2u);
}

CheckpointRecord checkpoint_at(std::int64_t run_id, std::int64_t step, const std::string& reason) {
  CheckpointRecord checkpoint;
  checkpoint.run_id = run_id;
  checkpoint.step = step;
  checkpoint.epoch = step / 100;
  checkpoint.path = "checkpoints/step" + std::to_string(step) + ".pt";
  checkpoint.bytes = 1000 + step;
  checkpoint.reason = reason;
  checkpoint.metrics = {{"train/loss", 2.5 - 0.001 * static_cast<double>(step)}, {"eval/top1", 0.5}};
  return checkpoint;
}

TEST(RunStoreCheckpointTest, RecordsListsAndForgetsCheckpoints) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  RunStore store(path);
  RunStore reader(path);
  const auto id = store.begin_run(sample_run());
  for (std::int64_t step = 0; step <= 100; ++step) store.record_step(id, step_number(step));

  CheckpointRecord first = checkpoint_at(id, 100, "interval");
  first.metrics["eval/top5"] = std::nan("");
  store.record_checkpoint(first);
  EXPECT_EQ(reader.step_timings(id).size(), 101u) << "every step up to a checkpoint is written with it";

  CheckpointRecord given_time = checkpoint_at(id, 200, "epoch");
  given_time.created_at = "2025-01-31T12:00:00.000Z";
  store.record_checkpoint(given_time);
  store.record_checkpoint(checkpoint_at(id, 300, "signal"));

  auto listed = reader.checkpoints(id);
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].step, 100);
  EXPECT_EQ(listed[1].step, 200);
  EXPECT_EQ(listed[2].step, 300);
  EXPECT_EQ(listed[0].run_id, id);
  EXPECT_EQ(listed[0].epoch, 1);
  EXPECT_EQ(listed[0].path, "checkpoints/step100.pt");
  EXPECT_EQ(listed[0].bytes, 1100);
  EXPECT_EQ(listed[0].reason, "interval");
  EXPECT_TRUE(std::regex_match(listed[0].created_at, kIsoUtc)) << "filled in when empty: " << listed[0].created_at;
  EXPECT_EQ(listed[1].created_at, "2025-01-31T12:00:00.000Z");
  ASSERT_EQ(listed[0].metrics.size(), 3u);
  EXPECT_DOUBLE_EQ(listed[0].metrics.at("train/loss"), 2.4);
  EXPECT_DOUBLE_EQ(listed[0].metrics.at("eval/top1"), 0.5);
  EXPECT_TRUE(std::isnan(listed[0].metrics.at("eval/top5")));

  store.forget_checkpoint(id, "checkpoints/step200.pt");  // pruned by keep_max
  store.forget_checkpoint(id, "checkpoints/never_written.pt");
  listed = reader.checkpoints(id);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].step, 100);
  EXPECT_EQ(listed[1].step, 300);
  EXPECT_TRUE(reader.checkpoints(id + 1).empty());
}

// A run that recorded steps 0..9, metrics and checkpoints, then was interrupted.
std::int64_t interrupted_run(RunStore& store) {
  const auto id = store.begin_run(run_on_this_host());
  for (std::int64_t step = 0; step < 10; ++step) store.record_step(id, step_number(step));
  store.record_metric(id, 5, 0, "eval/top1", 0.5);
  store.record_metric(id, 9, 0, "eval/top1", 0.6);
  store.record_checkpoint(checkpoint_at(id, 4, "interval"));
  store.record_checkpoint(checkpoint_at(id, 8, "interval"));
  store.finish_run(id, RunStatus::interrupted, "SIGINT");
  return id;
}

TEST(RunStoreResumeTest, ResumeDiscardsWhatComesAfterTheCheckpointAndSaysSo) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  const auto id = interrupted_run(store);

  store.resume_run(id, 4, "resumed from checkpoints/step4.pt");
  const auto run = store.find_run(std::to_string(id));
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->status, "running");
  EXPECT_EQ(run->ended_at, "");
  EXPECT_EQ(run->error, "");
  EXPECT_EQ(run->resumed_count, 1);
  EXPECT_EQ(run->pid, static_cast<std::int64_t>(::getpid()));
  EXPECT_EQ(run->final_metrics.count("eval/top1"), 0u) << "metrics after step 4 are redone by the resumed run";

  const auto steps = store.step_timings(id);
  ASSERT_EQ(steps.size(), 5u);
  EXPECT_EQ(steps.back().step, 4);
  const auto checkpoints = store.checkpoints(id);
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(checkpoints[0].step, 4);

  const auto events = store.events(id);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, "resume");
  EXPECT_TRUE(std::regex_match(events.back().time, kIsoUtc)) << events.back().time;
  EXPECT_NE(events.back().message.find("resumed from checkpoints/step4.pt"), std::string::npos)
      << events.back().message;
  EXPECT_NE(events.back().message.find("discarded 5 step rows, 2 metric values and 1 checkpoint records"),
            std::string::npos)
      << events.back().message;

  // The resumed run records and ends like any other.
  for (std::int64_t step = 5; step < 12; ++step) store.record_step(id, step_number(step));
  store.finish_run(id, RunStatus::finished);
  EXPECT_EQ(store.step_timings(id).size(), 12u);
  EXPECT_EQ(store.find_run(std::to_string(id))->status, "finished");
}

// A run's duration is the time it ran: the time between its end (or, lost,
// its last heartbeat) and a resume is not in it, however long the wait.
TEST(RunStoreResumeTest, TheTimeARunWasStoppedIsNotInItsDuration) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  RunStore store(path);
  const auto ended = store.begin_run(sample_run());
  store.finish_run(ended, RunStatus::interrupted, "SIGINT");
  set_run_row(path, ended, "started_at = '2025-01-31T12:00:00.000Z', ended_at = '2025-01-31T12:01:40.000Z'");
  const auto lost = store.begin_run(sample_run("elsewhere"));
  set_run_row(path, lost, "started_at = '2025-01-31T12:00:00.000Z', heartbeat_at = '2025-01-31T12:00:30.000Z'");
  ASSERT_EQ(store.find_run(std::to_string(lost))->status, "lost");

  for (const auto& [id, ran] : {std::pair{ended, 100.0}, std::pair{lost, 30.0}}) {
    store.resume_run(id, 0, "resumed a year later");
    EXPECT_NEAR(store.find_run(std::to_string(id))->duration_s, ran, 5.0) << "running again";
    store.finish_run(id, RunStatus::finished);
    const auto run = store.find_run(std::to_string(id));
    EXPECT_NEAR(run->duration_s, ran, 5.0) << "run " << id << " ran " << ran << " s, then a moment after the resume";
    EXPECT_GE(run->duration_s, ran);
  }
  EXPECT_EQ(store.find_runs(RunFilter{.sort_by = "duration"}).front().id, ended) << "sorted by the time they ran";
}

TEST(RunStoreResumeTest, RefusesARunSomeoneIsStillTraining) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  RunStore store(path);
  const auto live = store.begin_run(run_on_this_host());
  store.record_step(live, step_number(0));
  const std::string message = error_message_of([&] { RunStore(path).resume_run(live, 0, "again"); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("run " + std::to_string(live) + " is still running"), std::string::npos) << message;
  EXPECT_EQ(store.find_run(std::to_string(live))->resumed_count, 0) << "a refused resume changes nothing";

  const std::string unknown = error_message_of([&] { store.resume_run(999, 0, ""); });
  EXPECT_NE(unknown.find("no run 999"), std::string::npos) << unknown;
}

TEST(RunStoreResumeTest, ResumesALostRun) {
  ScratchDir dir;
  const std::string path = dir.file("runs.db");
  std::int64_t id = 0;
  {
    RunStore crashed(path);
    id = crashed.begin_run(run_on_this_host());
    for (std::int64_t step = 0; step < 7; ++step) crashed.record_step(id, step_number(step));
  }
  set_run_row(path, id, "pid = " + std::to_string(dead_pid()));

  RunStore store(path);
  ASSERT_EQ(store.find_run(std::to_string(id))->status, "lost");
  store.resume_run(id, 3, "");
  const auto run = store.find_run(std::to_string(id));
  EXPECT_EQ(run->status, "running");
  EXPECT_EQ(run->pid, static_cast<std::int64_t>(::getpid()));
  EXPECT_EQ(store.step_timings(id).size(), 4u);
  EXPECT_NE(store.events(id).back().message.find("(was lost)"), std::string::npos) << store.events(id).back().message;
}

TEST(RunStoreTensorTest, RecordsWhatTransferLearningDidWithEachTensor) {
  ScratchDir dir;
  RunStore store(dir.file("runs.db"));
  const auto id = store.begin_run(sample_run());
  const std::vector<TensorRecord> recorded = {
      {"conv1.weight", "[64, 3, 7, 7]", "loaded", ""},
      {"layer1.0.bn1.weight", "[64]", "frozen", ""},
      {"fc.weight", "[10, 512]", "mismatched", "checkpoint has [1000, 512]"},
      {"fc.bias", "[10]", "excluded", "exclude = [\"fc.*\"]"},
  };
  store.record_tensors(id, recorded);
  auto read = store.tensors(id);
  ASSERT_EQ(read.size(), recorded.size());
  for (std::size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].name, recorded[i].name);
    EXPECT_EQ(read[i].shape, recorded[i].shape);
    EXPECT_EQ(read[i].action, recorded[i].action);
    EXPECT_EQ(read[i].detail, recorded[i].detail);
  }

  store.record_tensors(id, {{"head.weight", "[10]", "missing", ""}});
  read = store.tensors(id);
  ASSERT_EQ(read.size(), 1u) << "recording again replaces, never lists a tensor twice";
  EXPECT_EQ(read[0].name, "head.weight");

  const std::string message =
      error_message_of([&] { store.record_tensors(id, {{"x", "[1]", "copied", ""}}); });
  EXPECT_NE(message.find("'copied'"), std::string::npos) << message;
  EXPECT_NE(message.find("loaded, excluded, frozen, missing, unexpected, mismatched"), std::string::npos) << message;
  EXPECT_EQ(store.tensors(id).size(), 1u);
  EXPECT_TRUE(store.tensors(id + 1).empty());
}

}  // namespace
}  // namespace orchestrate

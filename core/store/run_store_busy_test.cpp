// A busy or briefly failing database must never stop training: rows stay
// buffered, one warning is printed, and they are written in order later.
#include <chrono>
#include <thread>

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include "orchestrate/testing/scratch_dir.h"
#include "store/database_lock_testing.h"
#include "store/run_store.h"
#include "store/run_store_test_support.h"

namespace orchestrate {
using testing::DatabaseLock;
using testing::sample_run;
using testing::ScratchDir;
using testing::step_number;
namespace {

// Short, so a locked database is noticed quickly in a test.
constexpr std::chrono::milliseconds kTestBusyTimeout{50};

// A store that finds its database busy quickly, with one run begun.
struct BusyTestStore {
  BusyTestStore() {
    store.set_busy_timeout(kTestBusyTimeout);
    id = store.begin_run(sample_run());
  }
  ScratchDir dir;
  std::string path = dir.file("runs.db");
  RunStore store{path};
  std::int64_t id = 0;
};

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

TEST(RunStoreBusyTest, ABusyDatabaseKeepsEveryRowAndWritesThemInOrderLater) {
  BusyTestStore scratch;
  RunStore& store = scratch.store;
  const std::string& path = scratch.path;
  const std::int64_t id = scratch.id;
  store.record_step(id, step_number(0));
  store.flush();

  DatabaseLock lock(path);
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW({
    for (std::int64_t step = 1; step < 450; ++step) {  // past two full batches of 200
      store.record_step(id, step_number(step));
      if (step % 100 == 0) {
        store.record_metric(id, step, 0, "train/loss", static_cast<double>(step));
        store.record_event(id, "log", "step " + std::to_string(step));
      }
    }
    store.flush();  // an explicit flush of a busy database also keeps the rows
  });
  const std::string while_locked = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_of(while_locked, "orchestrate: run store " + path + " is busy (database is locked); keeping "), 1u)
      << "one warning per busy spell, naming the file:\n"
      << while_locked;
  EXPECT_NE(while_locked.find("rows buffered and retrying"), std::string::npos) << while_locked;

  RunStore reader(path);
  EXPECT_EQ(reader.step_timings(id).size(), 1u) << "nothing got past the lock";

  lock.release();
  ::testing::internal::CaptureStderr();
  store.flush();
  const std::string after = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(after.find("run store " + path + " is writable again; wrote the "), std::string::npos) << after;

  const auto steps = reader.step_timings(id);
  ASSERT_EQ(steps.size(), 450u);
  for (std::size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].step, static_cast<std::int64_t>(i));

  SQLite::Database raw(path);
  SQLite::Statement metrics(raw, "SELECT step, value FROM metrics WHERE run_id = ? ORDER BY id");
  metrics.bind(1, id);
  std::int64_t expected_step = 100;
  while (metrics.executeStep()) {
    EXPECT_EQ(metrics.getColumn(0).getInt64(), expected_step);
    EXPECT_DOUBLE_EQ(metrics.getColumn(1).getDouble(), static_cast<double>(expected_step));
    expected_step += 100;
  }
  EXPECT_EQ(expected_step, 500) << "metrics at steps 100..400, in the order recorded";

  const auto events = reader.events(id);
  ASSERT_EQ(events.size(), 4u);
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].message, "step " + std::to_string(100 * (i + 1)));
}

// The one write that does not wait in the buffer: a checkpoint is published
// only once the store lists it, so a busy database fails the record (the
// checkpoint is then not published), and the record is never written later,
// while the rows before it still are.
TEST(RunStoreBusyTest, ACheckpointIsNotRecordedWhileTheDatabaseIsBusyNorLater) {
  BusyTestStore scratch;
  RunStore& store = scratch.store;
  const std::string& path = scratch.path;
  const std::int64_t id = scratch.id;
  CheckpointRecord checkpoint;
  checkpoint.run_id = id;
  checkpoint.step = 40;
  checkpoint.path = "checkpoints/step40";

  DatabaseLock lock(path);
  store.record_step(id, step_number(39));
  ::testing::internal::CaptureStderr();
  const std::string message = testing::error_message_of([&] { store.record_checkpoint(checkpoint); });
  const std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("run store " + path + ": recording checkpoint checkpoints/step40 of run " +
                         std::to_string(id) + " failed: database is locked; another process kept the database "
                         "locked past the busy timeout"),
            std::string::npos)
      << message;
  EXPECT_NE(warned.find("is busy (database is locked); keeping 1 "), std::string::npos)
      << "the step row before it stays buffered:\n" << warned;

  lock.release();
  store.flush();
  RunStore reader(path);
  EXPECT_TRUE(reader.checkpoints(id).empty()) << "the failed record was withdrawn";
  ASSERT_EQ(reader.step_timings(id).size(), 1u);
  EXPECT_EQ(reader.step_timings(id)[0].step, 39);

  checkpoint.step = 80;
  checkpoint.path = "checkpoints/step80";
  store.record_checkpoint(checkpoint);
  ASSERT_EQ(reader.checkpoints(id).size(), 1u) << "written at once, with no flush";
  EXPECT_EQ(reader.checkpoints(id)[0].path, "checkpoints/step80");
}

TEST(RunStoreBusyTest, TheBackgroundFlushRetriesUntilTheLockIsGone) {
  BusyTestStore scratch;
  RunStore& store = scratch.store;
  const std::string& path = scratch.path;
  const std::int64_t id = scratch.id;
  store.set_flush_interval(std::chrono::duration<double>(0.05));
  RunStore reader(path);

  ::testing::internal::CaptureStderr();
  {
    DatabaseLock lock(path);
    for (std::int64_t step = 0; step < 10; ++step) store.record_step(id, step_number(step));
    EXPECT_NO_THROW(store.record_metric(id, 9, 0, "train/loss", 1.5));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // several background tries fail meanwhile
  }
  const auto give_up_at = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (reader.step_timings(id).size() < 10 && std::chrono::steady_clock::now() < give_up_at) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  store.finish_run(id, RunStatus::finished);
  const std::string output = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(reader.step_timings(id).size(), 10u) << "written by the background flush, no flush() called\n" << output;
  EXPECT_DOUBLE_EQ(reader.find_run(std::to_string(id))->final_metrics.at("train/loss"), 1.5);
  EXPECT_EQ(count_of(output, " is busy ("), 1u) << output;
}

TEST(RunStoreBusyTest, FinishRunWaitsOutABriefLock) {
  BusyTestStore scratch;
  RunStore& store = scratch.store;
  const std::string& path = scratch.path;
  const std::int64_t id = scratch.id;
  for (std::int64_t step = 0; step < 3; ++step) store.record_step(id, step_number(step));

  auto lock = std::make_unique<DatabaseLock>(path);
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // ten busy timeouts
    lock.reset();
  });
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(store.finish_run(id, RunStatus::finished));
  const std::string output = ::testing::internal::GetCapturedStderr();
  releaser.join();
  EXPECT_NE(output.find("retrying for up to 30 s"), std::string::npos) << output;

  RunStore reader(path);
  EXPECT_EQ(reader.find_run(std::to_string(id))->status, "finished");
  EXPECT_EQ(reader.step_timings(id).size(), 3u);
}

}  // namespace
}  // namespace orchestrate

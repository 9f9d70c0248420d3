// RunStore's insides, shared by run_store.cpp (opening, run lifecycle,
// reading runs), run_store_queries.cpp (filtered runs, one run's details),
// run_store_writes.cpp (buffered writes, flushing, busy databases) and
// run_store_artifacts.cpp (checkpoints, tensors, events).
// Private to core/store.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include "store/pending_rows.h"
#include "store/periodic_task.h"
#include "store/record_call_clock.h"
#include "store/run_store.h"
#include "store/store_error.h"

namespace orchestrate {

// One commit per 200 steps keeps logging to a few microseconds per step (a
// commit costs far more than an insert); the flush interval bounds how long
// rows wait when steps are slow.
inline constexpr std::size_t kStepsPerTransaction = 200;
// While the database cannot be written, steps are buffered up to this many
// (about 90 MB); later ones are dropped, so a disk full for hours ends in a
// gap in the step timings, not in a training process killed for memory.
inline constexpr std::size_t kMaxBufferedSteps = 1'000'000;
// Another process's write transaction (ours last milliseconds) is waited for
// this long before a write counts as busy.
inline constexpr std::chrono::milliseconds kDefaultBusyTimeout{5000};
// finish_run ends a run once; it keeps trying a busy database this long
// (each try also waits the busy timeout) before giving up.
inline constexpr std::chrono::seconds kFinishRetryLimit{30};

// A run that never beat (written before migration 2) was last seen when it started.
#define ORCHESTRATE_SQL_LAST_SEEN "coalesce(heartbeat_at, started_at)"

// The columns read_summary reads, in its order; queries append their own
// columns after these and then "FROM runs ...".
inline constexpr const char* kSummaryColumns =
    "SELECT id, name, status, device, started_at, coalesce(ended_at, ''),"
    " round((julianday(coalesce(ended_at, 'now')) - julianday(started_at)) * 86400.0 - paused_s, 3), error,"
    " pid, host, " ORCHESTRATE_SQL_LAST_SEEN ","
    " (julianday('now') - julianday(" ORCHESTRATE_SQL_LAST_SEEN ")) * 86400.0,"
    " round((julianday(" ORCHESTRATE_SQL_LAST_SEEN ") - julianday(started_at)) * 86400.0 - paused_s, 3),"
    " resumed_count, recipe_path, kind, coalesce(source_run_id, 0)";

// Holds the connection, its prepared statements (compiled once: parsing SQL
// costs more than running these small statements), the rows not yet written
// and the background flush.
//
// Locks, always taken in this order: lifecycle_mutex (begin, resume, finish:
// whether the background thread runs), db_mutex (the connection, its
// statements, active_runs), buffer_mutex (pending). record_step takes only
// buffer_mutex, so training never waits for a write under way on another
// thread.
struct RunStore::Impl {
  Impl(const std::string& file_path, StoreAccess access);
  RunStore::RecordObserver observer;  // observe()
  ~Impl();  // stops the background thread, then writes what is buffered

  // Runs `work` holding db_mutex, turning SQLite failures into Errors that
  // name the file and what was being done.
  template <class Work>
  auto locked(const std::string& doing, Work&& work) -> decltype(work()) {
    std::lock_guard lock(db_mutex);
    try {
      return work();
    } catch (const SQLite::Exception& error) {
      throw_store_error(path, doing, error);
    } catch (const std::filesystem::filesystem_error& error) {
      throw_store_error(path, doing, error);
    }
  }

  // --- writing (run_store_writes.cpp) ---
  // Buffers a row; true when a full batch of steps waits to be written.
  bool buffer_step(std::int64_t run_id, const StepTiming& timing);
  void buffer(PendingMetric metric);
  void buffer(PendingEvent event);
  void buffer(PendingCheckpointChange change);
  // From record_step: writes a full batch unless another thread is using the
  // connection (it or the next step will) or the database is known busy
  // (the background flush retries; waiting here would stall training).
  void write_full_batch();
  // From record_metric and its kind: writes now unless the database is known busy.
  void write_now(const std::string& doing);
  // Caller holds db_mutex. Writes the buffered rows; a transient failure
  // keeps them (one warning), any other throws an Error.
  void flush_or_keep(const std::string& doing);
  // Caller holds db_mutex. Writes every buffered row and, when one is due,
  // the heartbeat of active_runs in one transaction; returns the number of rows written.
  // Throws SQLite::Exception; the rows are kept for a transient failure,
  // otherwise the row that failed (all, if unknown) is dropped, since it
  // would fail the same way on every try.
  std::size_t write_pending();
  // Caller holds db_mutex. Runs `attempt` until it does not fail with a
  // transient error or `limit` has passed (then rethrows).
  void retry_while_busy(std::chrono::seconds limit, const std::function<void()>& attempt);
  // The background thread's work: never throws.
  void flush_in_background() noexcept;
  void warn_busy(const SQLite::Exception& error, const std::string& then);
  // warn_busy for rows left to the background flush, which retries them.
  void warn_busy_retrying(const SQLite::Exception& error);
  void note_written(std::size_t rows);

  // --- runs (run_store.cpp) ---
  // A run's row as stored, and whether it reads as lost.
  struct StoredRun {
    std::string status;  // as stored: "running" also when lost
    bool lost = false;
    std::int64_t pid = 0;
    std::string host, last_seen_at;
  };
  // Caller holds db_mutex. False if there is no run `run_id`.
  bool read_stored_run(std::int64_t run_id, StoredRun& run);
  void take_in_crash_breadcrumbs();
  // Callers hold db_mutex.
  RunSummary read_summary(SQLite::Statement& row);
  void add_metrics_and_tags(std::vector<RunSummary>& summaries);
  std::vector<RunSummary> read_summaries(SQLite::Statement& query);
  double staleness_limit() const;
  void start_beating(std::int64_t run_id);  // caller holds lifecycle_mutex, not db_mutex

  std::string path;
  std::string host;  // this machine's name, to tell whose runs' pids can be checked
  SQLite::Database db;
  SQLite::Statement insert_run, insert_plugin, insert_param, insert_tag, insert_step, insert_metric, insert_event;
  SQLite::Statement insert_checkpoint, delete_checkpoint, beat;
  SQLite::Statement select_status, update_ended;
  SQLite::Statement select_runs, select_run_by_id, select_newest_run_named, select_final_metrics, select_tags;
  SQLite::Statement select_steps, select_recipe;

  std::mutex lifecycle_mutex;
  std::mutex db_mutex;
  RunInvocation invocation;  // recorded with every run begun here
  std::vector<std::int64_t> active_runs;  // begun or resumed here and not yet finished; they beat
  std::chrono::steady_clock::time_point last_beat{};  // when write_pending last beat them

  std::mutex buffer_mutex;
  PendingRows pending;
  std::size_t dropped_steps = 0;  // past kMaxBufferedSteps since the last successful write

  // Set after a transient write failure, until a write succeeds: the warning
  // is printed once, and training's write paths only buffer meanwhile.
  std::atomic<bool> busy{false};
  std::atomic<double> flush_interval_s{kDefaultFlushInterval.count()};
  RecordCallClock record_clock{RecordCallClock::mode_from_environment()};  // off unless benchmarking
  PeriodicTask background_flush{[this] { flush_in_background(); }};  // last: stopped before the rest goes
};

}  // namespace orchestrate

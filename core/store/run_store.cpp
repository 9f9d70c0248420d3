// Opening the store, the life of a run (begin, resume, finish) and reading
// runs back. Buffered writes are in run_store_writes.cpp; checkpoints,
// tensors and events in run_store_artifacts.cpp.
#include "store/run_store.h"
#include "crash_report/crash_breadcrumb.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include <SQLiteCpp/Transaction.h>

#include "orchestrate/error.h"
#include "store/read_only_database.h"
#include "store/run_liveness.h"
#include "store/run_store_impl.h"
#include "store/run_store_schema.h"
#include "store/store_sql.h"

namespace orchestrate {
namespace {

SQLite::Database open_database(const std::string& path, StoreAccess access) {
  if (access == StoreAccess::read_only) return open_database_for_reading(path);
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE,
                      static_cast<int>(kDefaultBusyTimeout.count()));
  prepare_run_store_schema(db, path);
  return db;
}

std::string summary_query(const std::string& rest) { return std::string(kSummaryColumns) + " FROM runs " + rest; }

std::string run_label(std::int64_t run_id) { return "run " + std::to_string(run_id); }

}  // namespace

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::running: return "running";
    case RunStatus::finished: return "finished";
    case RunStatus::failed: return "failed";
    case RunStatus::interrupted: return "interrupted";
    case RunStatus::lost: return "lost";
  }
  return "unknown";
}

const char* to_string(RunKind kind) {
  switch (kind) {
    case RunKind::train: return "train";
    case RunKind::eval: return "eval";
  }
  return "unknown";
}

RunStore::Impl::Impl(const std::string& file_path, StoreAccess access)
    : path(file_path),
      host(this_host_name()),
      db(open_database(file_path, access)),
      insert_run(db,
                 "INSERT INTO runs (name, status, recipe_path, resolved_recipe, orchestrate_version, torch_version,"
                 " host, device, world_size, git_revision, started_at, pid, heartbeat_at, kind, source_run_id,"
                 " command_line) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, " ORCHESTRATE_SQL_NOW ", ?, "
                 ORCHESTRATE_SQL_NOW ", ?, ?, ?)"),
      insert_plugin(db, "INSERT INTO run_plugins (run_id, name, version, library_path, sha256) VALUES (?, ?, ?, ?, ?)"),
      insert_param(db, "INSERT INTO run_params (run_id, key, value) VALUES (?, ?, ?)"),
      insert_tag(db, "INSERT INTO run_tags (run_id, key, value) VALUES (?, ?, ?)"),
      insert_step(db,
                  "INSERT INTO step_timings (run_id, step, epoch, images, data_wait_s, compute_s, sync_s,"
                  " optimizer_s, total_s, loss, learning_rate, rank, bytes_sent)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
      insert_metric(db, "INSERT INTO metrics (run_id, step, epoch, name, value, recorded_at) VALUES (?, ?, ?, ?, ?, ?)"),
      insert_event(db, "INSERT INTO events (run_id, time, kind, message) VALUES (?, ?, ?, ?)"),
      insert_checkpoint(db,
                        "INSERT INTO checkpoints (run_id, step, epoch, path, bytes, created_at, metrics, reason)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
      delete_checkpoint(db, "DELETE FROM checkpoints WHERE run_id = ? AND path = ?"),
      // Only a run still running beats: another process may have ended it.
      beat(db, "UPDATE runs SET heartbeat_at = " ORCHESTRATE_SQL_NOW " WHERE id = ? AND status = 'running'"),
      select_status(db, "SELECT status FROM runs WHERE id = ?"),
      update_ended(db,
                   "UPDATE runs SET status = ?, error = ?, ended_at = " ORCHESTRATE_SQL_NOW
                   ", heartbeat_at = " ORCHESTRATE_SQL_NOW " WHERE id = ?"),
      // A negative LIMIT means no limit in SQLite.
      select_runs(db, summary_query("ORDER BY id DESC LIMIT ?")),
      select_run_by_id(db, summary_query("WHERE id = ?")),
      select_newest_run_named(db, summary_query("WHERE name = ? ORDER BY id DESC LIMIT 1")),
      // The runs' ids come bound as one JSON array, so one statement serves any
      // number of runs. Each (run, metric) pair's last value is one probe of
      // the index metrics_by_run (run_id, name, step, then id): 15 times
      // faster than ranking every row with a window function (1,000 runs,
      // 300,000 values: 50 ms against 730 ms).
      select_final_metrics(db,
                           "SELECT pair.run_id, pair.name, (SELECT value FROM metrics WHERE run_id = pair.run_id"
                           " AND name = pair.name ORDER BY step DESC, id DESC LIMIT 1)"
                           " FROM (SELECT DISTINCT run_id, name FROM metrics"
                           " WHERE run_id IN (SELECT value FROM json_each(?))) AS pair"),
      select_tags(db, "SELECT run_id, key, value FROM run_tags WHERE run_id IN (SELECT value FROM json_each(?))"),
      select_steps(db,
                   "SELECT step, epoch, images, data_wait_s, compute_s, sync_s, optimizer_s, total_s, loss,"
                   " learning_rate, rank, bytes_sent FROM step_timings WHERE run_id = ? AND rank = ?"
                   " ORDER BY step, rowid"),
      select_recipe(db, "SELECT resolved_recipe FROM runs WHERE id = ?") {
  pending.steps.reserve(kStepsPerTransaction);
}

// The thread goes first, so nothing writes while the rest is torn down.
// Buffered rows are written on the way out; a failure there can only be
// reported, since destructors must not throw.
RunStore::Impl::~Impl() {
  background_flush.stop();
  std::size_t rows = 0;
  try {
    std::lock_guard lock(db_mutex);
    {
      std::lock_guard buffer_lock(buffer_mutex);
      rows = pending.size();
    }
    note_written(write_pending());
    const std::string said = record_clock.summary(path);  // "" unless a benchmark asked for it
    if (!said.empty()) std::cerr << "orchestrate: " << said << '\n';
  } catch (const std::exception& error) {
    std::cerr << "orchestrate: run store " << path << ": " << rows << " buffered rows were lost: " << error.what()
              << '\n';
  } catch (...) {
    std::cerr << "orchestrate: run store " << path << ": " << rows << " buffered rows were lost\n";
  }
}

double RunStore::Impl::staleness_limit() const {
  return staleness_limit_s(std::chrono::duration<double>(flush_interval_s.load()));
}

void RunStore::Impl::start_beating(std::int64_t run_id) {
  {
    std::lock_guard lock(db_mutex);
    if (std::find(active_runs.begin(), active_runs.end(), run_id) == active_runs.end()) active_runs.push_back(run_id);
  }
  background_flush.start(beat_period(std::chrono::duration<double>(flush_interval_s.load())));
}

bool RunStore::Impl::read_stored_run(std::int64_t run_id, StoredRun& run) {
  SQLite::Statement query(db,
                          "SELECT status, host, pid, " ORCHESTRATE_SQL_LAST_SEEN ", (julianday('now') - julianday("
                          ORCHESTRATE_SQL_LAST_SEEN ")) * 86400.0 FROM runs WHERE id = ?");
  query.bind(1, run_id);
  if (!query.executeStep()) return false;
  run.status = query.getColumn(0).getString();
  run.host = query.getColumn(1).getString();
  run.pid = query.getColumn(2).getInt64();
  run.last_seen_at = query.getColumn(3).getString();
  const RunPulse pulse{run.host, run.pid, query.getColumn(4).getDouble()};
  run.lost = run.status == to_string(RunStatus::running) && run_is_lost(pulse, host, staleness_limit());
  return true;
}

// The current row of a summary query. A run stored as running whose process
// is gone reads as lost, its duration ending when it was last seen.
RunSummary RunStore::Impl::read_summary(SQLite::Statement& row) {
  RunSummary summary;
  summary.id = row.getColumn(0).getInt64();
  summary.name = row.getColumn(1).getString();
  summary.status = row.getColumn(2).getString();
  summary.device = row.getColumn(3).getString();
  summary.started_at = row.getColumn(4).getString();
  summary.ended_at = row.getColumn(5).getString();
  summary.duration_s = row.getColumn(6).getDouble();
  summary.error = row.getColumn(7).getString();
  summary.pid = row.getColumn(8).getInt64();
  summary.host = row.getColumn(9).getString();
  summary.last_seen_at = row.getColumn(10).getString();
  summary.resumed_count = row.getColumn(13).getInt64();
  summary.recipe_path = row.getColumn(14).getString();
  summary.kind = row.getColumn(15).getString();
  summary.source_run_id = row.getColumn(16).getInt64();
  const RunPulse pulse{summary.host, summary.pid, row.getColumn(11).getDouble()};
  if (summary.status == to_string(RunStatus::running) && run_is_lost(pulse, host, staleness_limit())) {
    summary.duration_s = row.getColumn(12).getDouble();
    // A crash left its cause (crash_breadcrumb.h): shown as the run's until
    // a store opened for writing records it (take_in_crash_breadcrumbs).
    if (const auto crash = crash_of_run(path, summary.id)) {
      summary.status = to_string(RunStatus::failed);
      summary.error = crash->message;
      summary.ended_at = summary.last_seen_at;
    } else {
      summary.status = to_string(RunStatus::lost);
    }
  }
  return summary;
}

// One statement each for all the runs' final metrics and tags, not one per run.
void RunStore::Impl::add_metrics_and_tags(std::vector<RunSummary>& summaries) {
  if (summaries.empty()) return;
  std::map<std::int64_t, RunSummary*> by_id;
  std::string ids = "[";
  for (RunSummary& summary : summaries) {
    by_id[summary.id] = &summary;
    if (ids.size() > 1) ids += ',';
    ids += std::to_string(summary.id);
  }
  ids += ']';
  {
    ResetOnExit reset(select_final_metrics);
    select_final_metrics.bind(1, ids);
    while (select_final_metrics.executeStep()) {
      RunSummary& run = *by_id.at(select_final_metrics.getColumn(0).getInt64());
      run.final_metrics[select_final_metrics.getColumn(1).getString()] = real_column(select_final_metrics, 2);
    }
  }
  ResetOnExit reset(select_tags);
  select_tags.bind(1, ids);
  while (select_tags.executeStep()) {
    RunSummary& run = *by_id.at(select_tags.getColumn(0).getInt64());
    run.tags[select_tags.getColumn(1).getString()] = select_tags.getColumn(2).getString();
  }
}

// Runs `query` (its parameters already bound) and returns the summaries of its rows.
std::vector<RunSummary> RunStore::Impl::read_summaries(SQLite::Statement& query) {
  std::vector<RunSummary> summaries;
  {
    ResetOnExit reset(query);
    while (query.executeStep()) summaries.push_back(read_summary(query));
  }
  add_metrics_and_tags(summaries);
  return summaries;
}

std::string RunStore::resolve_path(const std::string& flag, const std::string& recipe_db) {
  if (!flag.empty()) return flag;
  const char* from_environment = std::getenv("ORCHESTRATE_DB");
  if (from_environment != nullptr && *from_environment != '\0') return from_environment;
  if (!recipe_db.empty()) return recipe_db;
  return kDefaultFile;
}

RunStore::RunStore(const std::string& path, StoreAccess access) {
  try {
    impl_ = std::make_unique<Impl>(path, access);
    if (access == StoreAccess::read_write) impl_->take_in_crash_breadcrumbs();
  } catch (const SQLite::Exception& error) {
    throw_store_error(path, "opening", error);
  } catch (const std::filesystem::filesystem_error& error) {
    throw_store_error(path, "creating its directory", error);
  }
}

RunStore::~RunStore() = default;  // Impl's destructor stops the thread and flushes
RunStore::RunStore(RunStore&&) noexcept = default;
RunStore& RunStore::operator=(RunStore&&) noexcept = default;

const std::string& RunStore::path() const { return impl_->path; }

std::int64_t RunStore::begin_run(const RunRecord& run) {
  Impl& s = *impl_;
  std::lock_guard lifecycle(s.lifecycle_mutex);
  const std::int64_t run_id = s.locked("recording the start of run '" + run.name + "'", [&] {
    SQLite::Transaction transaction(s.db, SQLite::TransactionBehavior::IMMEDIATE);
    {
      ResetOnExit reset(s.insert_run);
      s.insert_run.bind(1, run.name);
      s.insert_run.bind(2, run.recipe_path);
      s.insert_run.bind(3, run.resolved_recipe);
      s.insert_run.bind(4, run.orchestrate_version);
      s.insert_run.bind(5, run.torch_version);
      s.insert_run.bind(6, run.host);
      s.insert_run.bind(7, run.device);
      s.insert_run.bind(8, run.world_size);
      s.insert_run.bind(9, run.git_revision);
      s.insert_run.bind(10, static_cast<std::int64_t>(::getpid()));
      s.insert_run.bind(11, to_string(run.kind));
      if (const auto source = run.source_run_id != 0 ? run.source_run_id : s.invocation.source_run_id; source != 0) {
        s.insert_run.bind(12, source);
      } else {
        s.insert_run.bind(12);  // NULL: derived from no run
      }
      s.insert_run.bind(13, s.invocation.command_line);
      s.insert_run.exec();
    }
    const std::int64_t id = s.db.getLastInsertRowid();
    for (const PluginRecord& plugin : run.plugins) {
      ResetOnExit reset(s.insert_plugin);
      s.insert_plugin.bind(1, id);
      s.insert_plugin.bind(2, plugin.name);
      s.insert_plugin.bind(3, plugin.version);
      s.insert_plugin.bind(4, plugin.library_path);
      s.insert_plugin.bind(5, plugin.sha256);
      s.insert_plugin.exec();
    }
    for (const auto& [key, value] : run.params) {
      ResetOnExit reset(s.insert_param);
      s.insert_param.bind(1, id);
      s.insert_param.bind(2, key);
      s.insert_param.bind(3, value);
      s.insert_param.exec();
    }
    for (const auto& [key, value] : s.invocation.tags) {
      ResetOnExit reset(s.insert_tag);
      s.insert_tag.bind(1, id);
      s.insert_tag.bind(2, key);
      s.insert_tag.bind(3, value);
      s.insert_tag.exec();
    }
    transaction.commit();
    return id;
  });
  s.start_beating(run_id);
  return run_id;
}

void RunStore::set_invocation(RunInvocation invocation) {
  Impl& s = *impl_;
  std::lock_guard lock(s.db_mutex);
  s.invocation = std::move(invocation);
}

namespace {

// Deletes the rows of `table` that a resumed run records again; returns how many went.
int delete_after_step(SQLite::Database& db, const char* table, std::int64_t run_id, std::int64_t from_step) {
  SQLite::Statement remove(db, std::string("DELETE FROM ") + table + " WHERE run_id = ? AND step > ?");
  remove.bind(1, run_id);
  remove.bind(2, from_step);
  return remove.exec();
}

}  // namespace

void RunStore::resume_run(std::int64_t run_id, std::int64_t from_step, const std::string& message) {
  Impl& s = *impl_;
  const std::string run = run_label(run_id);
  std::lock_guard lifecycle(s.lifecycle_mutex);
  s.locked("resuming " + run, [&] {
    // Checked and changed in one write transaction, so two processes cannot both resume it.
    SQLite::Transaction transaction(s.db, SQLite::TransactionBehavior::IMMEDIATE);
    Impl::StoredRun stored;
    if (!s.read_stored_run(run_id, stored)) {
      throw Error("run store " + s.path + ": no " + run + " to resume; `orchestrate runs` lists the runs");
    }
    if (stored.status == to_string(RunStatus::running) && !stored.lost) {
      throw Error("run store " + s.path + ": " + run + " is still running (pid " + std::to_string(stored.pid) +
                  " on " + (stored.host.empty() ? std::string("an unknown host") : stored.host) + ", last seen " +
                  stored.last_seen_at + "); stop that process first, or wait until `orchestrate runs` shows it lost");
    }
    const int steps = delete_after_step(s.db, "step_timings", run_id, from_step);
    const int metrics = delete_after_step(s.db, "metrics", run_id, from_step);
    const int checkpoints = delete_after_step(s.db, "checkpoints", run_id, from_step);

    SQLite::Statement take_up(s.db,
                              "UPDATE runs SET status = 'running',"
                              " paused_s = paused_s + max(0, (julianday('now') - julianday(coalesce(ended_at, "
                              ORCHESTRATE_SQL_LAST_SEEN "))) * 86400.0),"
                              " ended_at = NULL, error = '', pid = ?,"
                              " host = coalesce(nullif(?, ''), host), heartbeat_at = " ORCHESTRATE_SQL_NOW
                              ", resumed_count = resumed_count + 1 WHERE id = ?");
    take_up.bind(1, static_cast<std::int64_t>(::getpid()));
    take_up.bind(2, s.host);  // it may resume on another machine than it started on
    take_up.bind(3, run_id);
    take_up.exec();

    std::string said = message.empty() ? "" : message + "; ";
    said += "discarded " + std::to_string(steps) + " step rows, " + std::to_string(metrics) + " metric values and " +
            std::to_string(checkpoints) + " checkpoint records after step " + std::to_string(from_step) +
            " (was " + (stored.lost ? "lost" : stored.status) + ")";
    ResetOnExit reset(s.insert_event);
    s.insert_event.bind(1, run_id);
    s.insert_event.bind(2, utc_now_iso());
    s.insert_event.bind(3, "resume");
    s.insert_event.bind(4, said);
    s.insert_event.exec();
    transaction.commit();
  });
  remove_crash_breadcrumbs(s.path, run_id);  // the crash it recovers from is in its events
  s.start_beating(run_id);
}

void RunStore::finish_run(std::int64_t run_id, RunStatus status, const std::string& error) {
  Impl& s = *impl_;
  const std::string run = run_label(run_id);
  if (status == RunStatus::running || status == RunStatus::lost) {
    throw Error("run store " + s.path + ": cannot finish " + run + " with status " + to_string(status) + "; " +
                "pass finished, failed or interrupted");
  }
  // Ends the run; a failed try leaves everything as it was, so it can be retried.
  auto end_run = [&] {
    SQLite::Transaction transaction(s.db, SQLite::TransactionBehavior::IMMEDIATE);
    {
      ResetOnExit reset(s.select_status);
      s.select_status.bind(1, run_id);
      if (!s.select_status.executeStep()) {
        throw Error("run store " + s.path + ": no " + run + " to end; `orchestrate runs` lists the runs");
      }
      const std::string current = s.select_status.getColumn(0).getString();
      if (current != to_string(RunStatus::running)) {
        throw Error("run store " + s.path + ": " + run + " has already ended (status " + current +
                    "); an ended run's status is final");
      }
    }
    ResetOnExit reset(s.update_ended);
    s.update_ended.bind(1, to_string(status));
    s.update_ended.bind(2, error);
    s.update_ended.bind(3, run_id);
    s.update_ended.exec();
    transaction.commit();
  };

  std::lock_guard lifecycle(s.lifecycle_mutex);
  const bool none_left = s.locked("ending " + run, [&] {
    s.retry_while_busy(kFinishRetryLimit, [&] {
      s.note_written(s.write_pending());
      end_run();
    });
    s.active_runs.erase(std::remove(s.active_runs.begin(), s.active_runs.end(), run_id), s.active_runs.end());
    return s.active_runs.empty();
  });
  // Outside db_mutex: the thread may be waiting for it to finish its flush.
  if (none_left) s.background_flush.stop();
}

std::vector<RunSummary> RunStore::list_runs(std::size_t limit) const {
  Impl& s = *impl_;
  return s.locked("listing runs", [&] {
    s.select_runs.bind(1, limit == 0 ? std::int64_t{-1} : static_cast<std::int64_t>(limit));
    return s.read_summaries(s.select_runs);
  });
}

std::optional<RunSummary> RunStore::find_run(const std::string& id_or_name) const {
  Impl& s = *impl_;
  return s.locked("looking up run '" + id_or_name + "'", [&]() -> std::optional<RunSummary> {
    std::int64_t id = 0;
    if (parse_id(id_or_name, id)) {
      s.select_run_by_id.bind(1, id);
      auto found = s.read_summaries(s.select_run_by_id);
      if (!found.empty()) return found.front();
    }
    s.select_newest_run_named.bind(1, id_or_name);
    auto found = s.read_summaries(s.select_newest_run_named);
    if (found.empty()) return std::nullopt;
    return found.front();
  });
}

std::vector<StepTiming> RunStore::step_timings(std::int64_t run_id, int rank) const {
  Impl& s = *impl_;
  return s.locked("reading the step timings of " + run_label(run_id), [&] {
    std::vector<StepTiming> timings;
    ResetOnExit reset(s.select_steps);
    s.select_steps.bind(1, run_id);
    s.select_steps.bind(2, rank);
    while (s.select_steps.executeStep()) {
      StepTiming timing;
      timing.step = s.select_steps.getColumn(0).getInt64();
      timing.epoch = s.select_steps.getColumn(1).getInt64();
      timing.images = s.select_steps.getColumn(2).getInt64();
      timing.data_wait_s = real_column(s.select_steps, 3);
      timing.compute_s = real_column(s.select_steps, 4);
      timing.sync_s = real_column(s.select_steps, 5);
      timing.optimizer_s = real_column(s.select_steps, 6);
      timing.total_s = real_column(s.select_steps, 7);
      timing.loss = real_column(s.select_steps, 8);
      timing.learning_rate = real_column(s.select_steps, 9);
      timing.rank = s.select_steps.getColumn(10).getInt();
      timing.bytes_sent = s.select_steps.getColumn(11).isNull() ? 0 : s.select_steps.getColumn(11).getInt64();
      timings.push_back(timing);
    }
    return timings;
  });
}

std::string RunStore::resolved_recipe(std::int64_t run_id) const {
  Impl& s = *impl_;
  const std::string run = run_label(run_id);
  return s.locked("reading the recipe of " + run, [&] {
    ResetOnExit reset(s.select_recipe);
    s.select_recipe.bind(1, run_id);
    if (!s.select_recipe.executeStep()) {
      throw Error("run store " + s.path + ": no " + run + "; `orchestrate runs` lists the runs");
    }
    return s.select_recipe.getColumn(0).getString();
  });
}

}  // namespace orchestrate

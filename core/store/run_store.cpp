#include "run_store.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <mutex>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>

#include "orchestrate/error.h"
#include "run_store_schema.h"
#include "store_error.h"

namespace orchestrate {
namespace {

// One commit per 200 steps keeps logging to a few microseconds per step (a
// commit costs far more than an insert) while a crash loses at most 199 rows.
constexpr std::size_t kStepsPerTransaction = 200;
// Another process's write transaction (ours last milliseconds) is waited for
// this long before a write gives up with SQLITE_BUSY.
constexpr int kBusyTimeoutMs = 5000;

// ISO-8601 UTC with milliseconds; julianday() parses it back for durations.
#define ORCHESTRATE_SQL_NOW "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

// Resets a cached statement when a scope ends, also on an exception: a
// statement left mid-way cannot be bound again, and a half-read SELECT keeps
// a read transaction open, which stops WAL checkpoints.
class ResetOnExit {
 public:
  explicit ResetOnExit(SQLite::Statement& statement) : statement_(statement) {}
  ~ResetOnExit() { statement_.tryReset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  SQLite::Statement& statement_;
};

// SQLite stores no NaN (it would turn it into NULL anyway); say so explicitly.
void bind_real(SQLite::Statement& statement, int index, double value) {
  if (std::isnan(value)) {
    statement.bind(index);
  } else {
    statement.bind(index, value);
  }
}

double real_column(const SQLite::Statement& statement, int index) {
  if (statement.isColumnNull(index)) return std::numeric_limits<double>::quiet_NaN();
  return statement.getColumn(index).getDouble();
}

SQLite::Database open_database(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, kBusyTimeoutMs);
  prepare_run_store_schema(db, path);
  return db;
}

constexpr const char* kSummaryColumns =
    "SELECT id, name, status, device, started_at, coalesce(ended_at, ''),"
    " round((julianday(coalesce(ended_at, 'now')) - julianday(started_at)) * 86400.0, 3), error FROM runs ";

std::string summary_query(const std::string& rest) { return kSummaryColumns + rest; }

bool parse_run_id(const std::string& text, std::int64_t& id) {
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, id);
  return !text.empty() && error == std::errc() && stop == end;
}

}  // namespace

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::running: return "running";
    case RunStatus::finished: return "finished";
    case RunStatus::failed: return "failed";
    case RunStatus::interrupted: return "interrupted";
  }
  return "unknown";
}

// Holds the connection and its prepared statements, compiled once: parsing
// SQL costs more than running these small statements.
struct RunStore::Impl {
  explicit Impl(const std::string& file_path)
      : path(file_path),
        db(open_database(file_path)),
        insert_run(db,
                   "INSERT INTO runs (name, status, recipe_path, resolved_recipe, orchestrate_version, torch_version,"
                   " host, device, world_size, git_revision, started_at)"
                   " VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, " ORCHESTRATE_SQL_NOW ")"),
        insert_plugin(db, "INSERT INTO run_plugins (run_id, name, version, library_path, sha256) VALUES (?, ?, ?, ?, ?)"),
        insert_param(db, "INSERT INTO run_params (run_id, key, value) VALUES (?, ?, ?)"),
        insert_step(db,
                    "INSERT INTO step_timings (run_id, step, epoch, images, data_wait_s, compute_s, sync_s,"
                    " optimizer_s, total_s, loss, learning_rate) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        insert_metric(db,
                      "INSERT INTO metrics (run_id, step, epoch, name, value, recorded_at)"
                      " VALUES (?, ?, ?, ?, ?, " ORCHESTRATE_SQL_NOW ")"),
        insert_event(db, "INSERT INTO events (run_id, time, kind, message) VALUES (?, " ORCHESTRATE_SQL_NOW ", ?, ?)"),
        select_status(db, "SELECT status FROM runs WHERE id = ?"),
        update_ended(db, "UPDATE runs SET status = ?, error = ?, ended_at = " ORCHESTRATE_SQL_NOW " WHERE id = ?"),
        // A negative LIMIT means no limit in SQLite.
        select_runs(db, summary_query("ORDER BY id DESC LIMIT ?")),
        select_run_by_id(db, summary_query("WHERE id = ?")),
        select_newest_run_named(db, summary_query("WHERE name = ? ORDER BY id DESC LIMIT 1")),
        select_final_metrics(db,
                             "SELECT name, value FROM (SELECT name, value, row_number() OVER"
                             " (PARTITION BY name ORDER BY step DESC, id DESC) AS recency"
                             " FROM metrics WHERE run_id = ?) WHERE recency = 1"),
        select_steps(db,
                     "SELECT step, epoch, images, data_wait_s, compute_s, sync_s, optimizer_s, total_s, loss,"
                     " learning_rate FROM step_timings WHERE run_id = ? ORDER BY step, rowid"),
        select_recipe(db, "SELECT resolved_recipe FROM runs WHERE id = ?") {
    pending_steps.reserve(kStepsPerTransaction);
  }

  // Buffered rows are written on the way out; a failure there can only be
  // reported, since destructors must not throw.
  ~Impl() {
    try {
      std::lock_guard lock(mutex);
      write_pending_steps();
    } catch (const std::exception& error) {
      std::cerr << "orchestrate: " << error.what() << '\n';
    } catch (...) {
      std::cerr << "orchestrate: run store " << path << ": buffered step rows were lost\n";
    }
  }

  // Runs `work` under the lock, turning SQLite failures into Errors that name
  // the file and what was being done.
  template <class Work>
  auto locked(const std::string& doing, Work&& work) -> decltype(work()) {
    std::lock_guard lock(mutex);
    try {
      return work();
    } catch (const SQLite::Exception& error) {
      throw_store_error(path, doing, error);
    } catch (const std::filesystem::filesystem_error& error) {
      throw_store_error(path, doing, error);
    }
  }

  // Caller holds the lock.
  void write_pending_steps() {
    if (pending_steps.empty()) return;
    try {
      SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
      for (const auto& [run_id, timing] : pending_steps) {
        ResetOnExit reset(insert_step);
        insert_step.bind(1, run_id);
        insert_step.bind(2, timing.step);
        insert_step.bind(3, timing.epoch);
        insert_step.bind(4, timing.images);
        bind_real(insert_step, 5, timing.data_wait_s);
        bind_real(insert_step, 6, timing.compute_s);
        bind_real(insert_step, 7, timing.sync_s);
        bind_real(insert_step, 8, timing.optimizer_s);
        bind_real(insert_step, 9, timing.total_s);
        bind_real(insert_step, 10, timing.loss);
        bind_real(insert_step, 11, timing.learning_rate);
        insert_step.exec();
      }
      transaction.commit();
      pending_steps.clear();
    } catch (const SQLite::Exception& error) {
      const std::string doing = "writing " + std::to_string(pending_steps.size()) + " step rows";
      // A busy database may be free at the next try, so the rows are kept;
      // any other failure would recur on every try, so they are dropped.
      const int code = error.getErrorCode() & 0xff;
      if (code != SQLITE_BUSY && code != SQLITE_LOCKED) pending_steps.clear();
      throw_store_error(path, doing, error);
    }
  }

  // The current row of a summary query, plus the run's final metrics.
  RunSummary read_summary(SQLite::Statement& row) {
    RunSummary summary;
    summary.id = row.getColumn(0).getInt64();
    summary.name = row.getColumn(1).getString();
    summary.status = row.getColumn(2).getString();
    summary.device = row.getColumn(3).getString();
    summary.started_at = row.getColumn(4).getString();
    summary.ended_at = row.getColumn(5).getString();
    summary.duration_s = row.getColumn(6).getDouble();
    summary.error = row.getColumn(7).getString();
    return summary;
  }

  void add_final_metrics(RunSummary& summary) {
    ResetOnExit reset(select_final_metrics);
    select_final_metrics.bind(1, summary.id);
    while (select_final_metrics.executeStep()) {
      summary.final_metrics[select_final_metrics.getColumn(0).getString()] = real_column(select_final_metrics, 1);
    }
  }

  // Runs `query` (its parameters already bound) and returns the summaries of its rows.
  std::vector<RunSummary> read_summaries(SQLite::Statement& query) {
    std::vector<RunSummary> summaries;
    {
      ResetOnExit reset(query);
      while (query.executeStep()) summaries.push_back(read_summary(query));
    }
    for (RunSummary& summary : summaries) add_final_metrics(summary);
    return summaries;
  }

  std::string path;
  SQLite::Database db;
  SQLite::Statement insert_run, insert_plugin, insert_param, insert_step, insert_metric, insert_event;
  SQLite::Statement select_status, update_ended;
  SQLite::Statement select_runs, select_run_by_id, select_newest_run_named, select_final_metrics;
  SQLite::Statement select_steps, select_recipe;
  std::vector<std::pair<std::int64_t, StepTiming>> pending_steps;  // (run id, timing), not yet written
  std::mutex mutex;  // a store may be shared by the training loop and hook threads
};

std::string RunStore::default_path() {
  const char* from_environment = std::getenv("ORCHESTRATE_DB");
  if (from_environment != nullptr && *from_environment != '\0') return from_environment;
  return "orchestrate.db";
}

RunStore::RunStore(const std::string& path) {
  try {
    impl_ = std::make_unique<Impl>(path);
  } catch (const SQLite::Exception& error) {
    throw_store_error(path, "opening", error);
  } catch (const std::filesystem::filesystem_error& error) {
    throw_store_error(path, "creating its directory", error);
  }
}

RunStore::~RunStore() = default;  // Impl's destructor flushes
RunStore::RunStore(RunStore&&) noexcept = default;
RunStore& RunStore::operator=(RunStore&&) noexcept = default;

const std::string& RunStore::path() const { return impl_->path; }

std::int64_t RunStore::begin_run(const RunRecord& run) {
  Impl& s = *impl_;
  return s.locked("recording the start of run '" + run.name + "'", [&] {
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
      s.insert_run.exec();
    }
    const std::int64_t run_id = s.db.getLastInsertRowid();
    for (const PluginRecord& plugin : run.plugins) {
      ResetOnExit reset(s.insert_plugin);
      s.insert_plugin.bind(1, run_id);
      s.insert_plugin.bind(2, plugin.name);
      s.insert_plugin.bind(3, plugin.version);
      s.insert_plugin.bind(4, plugin.library_path);
      s.insert_plugin.bind(5, plugin.sha256);
      s.insert_plugin.exec();
    }
    for (const auto& [key, value] : run.params) {
      ResetOnExit reset(s.insert_param);
      s.insert_param.bind(1, run_id);
      s.insert_param.bind(2, key);
      s.insert_param.bind(3, value);
      s.insert_param.exec();
    }
    transaction.commit();
    return run_id;
  });
}

void RunStore::record_step(std::int64_t run_id, const StepTiming& timing) {
  Impl& s = *impl_;
  std::lock_guard lock(s.mutex);
  s.pending_steps.emplace_back(run_id, timing);
  if (s.pending_steps.size() >= kStepsPerTransaction) s.write_pending_steps();
}

void RunStore::record_metric(std::int64_t run_id, std::int64_t step, std::int64_t epoch, const std::string& name,
                             double value) {
  Impl& s = *impl_;
  s.locked("recording metric '" + name + "' of run " + std::to_string(run_id), [&] {
    // Every write takes the write lock up front (IMMEDIATE), so it waits for
    // another process's write instead of failing on a stale read snapshot.
    SQLite::Transaction transaction(s.db, SQLite::TransactionBehavior::IMMEDIATE);
    ResetOnExit reset(s.insert_metric);
    s.insert_metric.bind(1, run_id);
    s.insert_metric.bind(2, step);
    s.insert_metric.bind(3, epoch);
    s.insert_metric.bind(4, name);
    bind_real(s.insert_metric, 5, value);
    s.insert_metric.exec();
    transaction.commit();
  });
}

void RunStore::record_event(std::int64_t run_id, const std::string& kind, const std::string& message) {
  Impl& s = *impl_;
  s.locked("recording a '" + kind + "' event of run " + std::to_string(run_id), [&] {
    SQLite::Transaction transaction(s.db, SQLite::TransactionBehavior::IMMEDIATE);
    ResetOnExit reset(s.insert_event);
    s.insert_event.bind(1, run_id);
    s.insert_event.bind(2, kind);
    s.insert_event.bind(3, message);
    s.insert_event.exec();
    transaction.commit();
  });
}

void RunStore::flush() {
  Impl& s = *impl_;
  std::lock_guard lock(s.mutex);
  s.write_pending_steps();
}

void RunStore::finish_run(std::int64_t run_id, RunStatus status, const std::string& error) {
  Impl& s = *impl_;
  const std::string run = "run " + std::to_string(run_id);
  if (status == RunStatus::running) {
    throw Error("run store " + s.path + ": cannot finish " + run + " with status running; " +
                "pass finished, failed or interrupted");
  }
  s.locked("ending " + run, [&] {
    s.write_pending_steps();
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
  });
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
    if (parse_run_id(id_or_name, id)) {
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

std::vector<StepTiming> RunStore::step_timings(std::int64_t run_id) const {
  Impl& s = *impl_;
  return s.locked("reading the step timings of run " + std::to_string(run_id), [&] {
    std::vector<StepTiming> timings;
    ResetOnExit reset(s.select_steps);
    s.select_steps.bind(1, run_id);
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
      timings.push_back(timing);
    }
    return timings;
  });
}

std::string RunStore::resolved_recipe(std::int64_t run_id) const {
  Impl& s = *impl_;
  const std::string run = "run " + std::to_string(run_id);
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

// The write paths training uses: rows are buffered, written in batches, by
// time (the background flush) and before anything that must be seen at once,
// and kept when the database is busy or briefly failing, so a slow or locked
// database never stops training.
#include <algorithm>
#include <iostream>
#include <sstream>
#include <thread>

#include <SQLiteCpp/Transaction.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "orchestrate/error.h"
#include "store/run_liveness.h"
#include "store/run_store_impl.h"
#include "store/store_sql.h"

namespace orchestrate {
namespace {

// Between tries of a busy database in finish_run (each try also waits the busy timeout).
constexpr std::chrono::milliseconds kBusyRetryPause{100};

// Which buffered row a write was at when it failed, so that a row that can
// never be written (a bug: an unknown run id) is dropped alone.
struct RowAt {
  enum Kind { none, step, metric, event, checkpoint_change } kind = none;
  std::size_t index = 0;
};

void drop_row(PendingRows& rows, const RowAt& at) {
  auto erase = [&](auto& list) { list.erase(list.begin() + static_cast<std::ptrdiff_t>(at.index)); };
  switch (at.kind) {
    case RowAt::step: erase(rows.steps); return;
    case RowAt::metric: erase(rows.metrics); return;
    case RowAt::event: erase(rows.events); return;
    case RowAt::checkpoint_change: erase(rows.checkpoint_changes); return;
    case RowAt::none: rows = PendingRows{}; return;  // failed outside any row: it would fail again
  }
}

void write_step(SQLite::Statement& insert, std::int64_t run_id, const StepTiming& timing) {
  ResetOnExit reset(insert);
  insert.bind(1, run_id);
  insert.bind(2, timing.step);
  insert.bind(3, timing.epoch);
  insert.bind(4, timing.images);
  bind_real(insert, 5, timing.data_wait_s);
  bind_real(insert, 6, timing.compute_s);
  bind_real(insert, 7, timing.sync_s);
  bind_real(insert, 8, timing.optimizer_s);
  bind_real(insert, 9, timing.total_s);
  bind_real(insert, 10, timing.loss);
  bind_real(insert, 11, timing.learning_rate);
  insert.bind(12, timing.rank);
  if (timing.bytes_sent > 0) insert.bind(13, timing.bytes_sent);
  else insert.bind(13);  // NULL: nothing sent
  insert.exec();
}

void write_metric(SQLite::Statement& insert, const PendingMetric& metric) {
  ResetOnExit reset(insert);
  insert.bind(1, metric.run_id);
  insert.bind(2, metric.step);
  insert.bind(3, metric.epoch);
  insert.bind(4, metric.name);
  bind_real(insert, 5, metric.value);
  insert.bind(6, metric.recorded_at);
  insert.exec();
}

void write_event(SQLite::Statement& insert, const PendingEvent& event) {
  ResetOnExit reset(insert);
  insert.bind(1, event.run_id);
  insert.bind(2, event.time);
  insert.bind(3, event.kind);
  insert.bind(4, event.message);
  insert.exec();
}

// JSON has no NaN or infinity; nlohmann writes them as null, read back as NaN.
std::string metrics_json(const std::map<std::string, double>& metrics) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : metrics) object[name] = value;
  return object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void write_checkpoint_change(SQLite::Statement& insert, SQLite::Statement& remove,
                             const PendingCheckpointChange& change) {
  const CheckpointRecord& checkpoint = change.record;
  if (change.forget) {
    ResetOnExit reset(remove);
    remove.bind(1, checkpoint.run_id);
    remove.bind(2, checkpoint.path);
    remove.exec();
    return;
  }
  ResetOnExit reset(insert);
  insert.bind(1, checkpoint.run_id);
  insert.bind(2, checkpoint.step);
  insert.bind(3, checkpoint.epoch);
  insert.bind(4, checkpoint.path);
  insert.bind(5, checkpoint.bytes);
  insert.bind(6, checkpoint.created_at);
  insert.bind(7, metrics_json(checkpoint.metrics));
  insert.bind(8, checkpoint.reason);
  insert.exec();
}

std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

}  // namespace

bool RunStore::Impl::buffer_step(std::int64_t run_id, const StepTiming& timing) {
  std::lock_guard lock(buffer_mutex);
  if (pending.steps.size() >= kMaxBufferedSteps) {
    if (dropped_steps++ == 0) {
      std::cerr << "orchestrate: run store " << path << ": " << kMaxBufferedSteps
                << " step rows are waiting to be written; dropping further step rows until it can be written\n";
    }
    return false;
  }
  pending.steps.emplace_back(run_id, timing);
  return pending.steps.size() >= kStepsPerTransaction;
}

void RunStore::Impl::buffer(PendingMetric metric) {
  std::lock_guard lock(buffer_mutex);
  pending.metrics.push_back(std::move(metric));
}

void RunStore::Impl::buffer(PendingEvent event) {
  std::lock_guard lock(buffer_mutex);
  pending.events.push_back(std::move(event));
}

void RunStore::Impl::buffer(PendingCheckpointChange change) {
  std::lock_guard lock(buffer_mutex);
  pending.checkpoint_changes.push_back(std::move(change));
}

void RunStore::Impl::write_full_batch() {
  if (busy.load(std::memory_order_relaxed)) return;
  std::unique_lock lock(db_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return;
  flush_or_keep("writing step rows");
}

void RunStore::Impl::write_now(const std::string& doing) {
  if (busy.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(db_mutex);
  flush_or_keep(doing);
}

void RunStore::Impl::flush_or_keep(const std::string& doing) {
  try {
    note_written(write_pending());
  } catch (const SQLite::Exception& error) {
    if (!is_transient(error)) throw_store_error(path, doing, error);
    warn_busy_retrying(error);
  }
}

void RunStore::Impl::warn_busy_retrying(const SQLite::Exception& error) {
  const auto retry_period = beat_period(std::chrono::duration<double>(flush_interval_s.load()));
  warn_busy(error, "retrying every " + seconds_text(retry_period.count()) + " s");
}

std::size_t RunStore::Impl::write_pending() {
  PendingRows batch;
  {
    std::lock_guard lock(buffer_mutex);
    std::swap(batch, pending);
  }
  // Liveness needs a beat per beat period (run_liveness.h), which the
  // background flush gives; beating in every write as well would add the
  // runs row to the commit of every metric, 4 a step with log_every = 1. A
  // beat skipped here is at most half a period old, so no beat is ever more
  // than one and a half periods old.
  const auto now = std::chrono::steady_clock::now();
  const bool beat_due = !active_runs.empty() &&
                    now - last_beat >= beat_period(std::chrono::duration<double>(flush_interval_s.load())) / 2;
  if (batch.empty() && !beat_due) return 0;

  RowAt at;
  try {
    // One IMMEDIATE transaction takes the write lock up front, so it waits
    // for another process's write instead of failing on a stale snapshot.
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    for (at = {RowAt::step, 0}; at.index < batch.steps.size(); ++at.index) {
      write_step(insert_step, batch.steps[at.index].first, batch.steps[at.index].second);
    }
    for (at = {RowAt::metric, 0}; at.index < batch.metrics.size(); ++at.index) {
      write_metric(insert_metric, batch.metrics[at.index]);
    }
    for (at = {RowAt::event, 0}; at.index < batch.events.size(); ++at.index) {
      write_event(insert_event, batch.events[at.index]);
    }
    for (at = {RowAt::checkpoint_change, 0}; at.index < batch.checkpoint_changes.size(); ++at.index) {
      write_checkpoint_change(insert_checkpoint, delete_checkpoint, batch.checkpoint_changes[at.index]);
    }
    at = {};
    for (const std::int64_t run_id : beat_due ? active_runs : std::vector<std::int64_t>{}) {
      ResetOnExit reset(beat);
      beat.bind(1, run_id);
      beat.exec();
    }
    transaction.commit();
    if (beat_due) last_beat = now;
  } catch (const SQLite::Exception& error) {
    if (!is_transient(error)) drop_row(batch, at);
    std::lock_guard lock(buffer_mutex);
    pending.put_back_in_front(std::move(batch));
    throw;
  }

  const std::size_t written = batch.size();
  // Hands the step buffer's memory back, so record_step does not grow a new one.
  batch.steps.clear();
  std::lock_guard lock(buffer_mutex);
  if (pending.steps.empty()) pending.steps.swap(batch.steps);
  return written;
}

void RunStore::Impl::retry_while_busy(std::chrono::seconds limit, const std::function<void()>& attempt) {
  const auto give_up_at = std::chrono::steady_clock::now() + limit;
  for (;;) {
    try {
      attempt();
      return;
    } catch (const SQLite::Exception& error) {
      if (!is_transient(error) || std::chrono::steady_clock::now() >= give_up_at) throw;
      warn_busy(error, "retrying for up to " + std::to_string(limit.count()) + " s");
      std::this_thread::sleep_for(kBusyRetryPause);
    }
  }
}

void RunStore::Impl::flush_in_background() noexcept {
  try {
    std::lock_guard lock(db_mutex);
    flush_or_keep("writing buffered rows");
  } catch (const std::exception& error) {
    std::cerr << "orchestrate: " << error.what() << '\n';
  } catch (...) {
    std::cerr << "orchestrate: run store " << path << ": the background flush failed\n";
  }
}

// Once per busy spell: a warning per failed try would flood the log of a
// long run.
void RunStore::Impl::warn_busy(const SQLite::Exception& error, const std::string& then) {
  if (busy.exchange(true)) return;
  std::size_t rows = 0;
  {
    std::lock_guard lock(buffer_mutex);
    rows = pending.size();
  }
  const int code = error.getErrorCode() & 0xff;
  const bool locked_by_another = code == SQLITE_BUSY || code == SQLITE_LOCKED;
  std::cerr << "orchestrate: run store " << path << (locked_by_another ? " is busy (" : " cannot be written (")
            << error.what() << "); keeping " << rows << " rows buffered and " << then << '\n';
}

void RunStore::Impl::note_written(std::size_t rows) {
  if (!busy.exchange(false)) return;
  std::size_t dropped = 0;
  {
    std::lock_guard lock(buffer_mutex);
    std::swap(dropped, dropped_steps);
  }
  std::cerr << "orchestrate: run store " << path << " is writable again; wrote the " << rows << " buffered rows";
  if (dropped > 0) std::cerr << " (" << dropped << " step rows past the buffer's limit were dropped)";
  std::cerr << '\n';
}

void RunStore::set_flush_interval(std::chrono::duration<double> interval) {
  Impl& s = *impl_;
  if (!(interval.count() > 0 && interval <= std::chrono::hours(24))) {
    throw Error("run store " + s.path + ": a flush interval of " + seconds_text(interval.count()) +
                " s is out of range; give more than 0 s and at most a day");
  }
  s.flush_interval_s = interval.count();
  s.background_flush.set_interval(beat_period(interval));
}

void RunStore::set_busy_timeout(std::chrono::milliseconds timeout) {
  Impl& s = *impl_;
  if (timeout.count() < 0 || timeout > std::chrono::hours(1)) {
    throw Error("run store " + s.path + ": a busy timeout of " + std::to_string(timeout.count()) +
                " ms is out of range; give 0 to 3600000 ms");
  }
  s.locked("setting the busy timeout", [&] { s.db.setBusyTimeout(static_cast<int>(timeout.count())); });
}

void RunStore::record_step(std::int64_t run_id, const StepTiming& timing) {
  Impl& s = *impl_;
  const RecordCallClock::Timed timed(s.record_clock);
  if (s.record_clock.discards()) return;
  if (s.observer.step) s.observer.step(run_id, timing);
  if (s.buffer_step(run_id, timing)) s.write_full_batch();
}

void RunStore::observe(RecordObserver observer) { impl_->observer = std::move(observer); }

void RunStore::record_metric(std::int64_t run_id, std::int64_t step, std::int64_t epoch, const std::string& name,
                             double value) {
  Impl& s = *impl_;
  const RecordCallClock::Timed timed(s.record_clock);
  if (s.record_clock.discards()) return;
  if (s.observer.metrics) s.observer.metrics(run_id, step, {{name, value}});
  s.buffer(PendingMetric{run_id, step, epoch, name, value, utc_now_iso()});
  s.write_now("recording metric '" + name + "' of run " + std::to_string(run_id));
}

void RunStore::record_metrics(std::int64_t run_id, std::int64_t step, std::int64_t epoch, const MetricValues& values) {
  if (values.empty()) return;
  Impl& s = *impl_;
  const RecordCallClock::Timed timed(s.record_clock);
  if (s.record_clock.discards()) return;
  if (s.observer.metrics) s.observer.metrics(run_id, step, values);
  const std::string now = utc_now_iso();
  for (const auto& [name, value] : values) s.buffer(PendingMetric{run_id, step, epoch, name, value, now});
  if (s.background_flush.running()) {
    s.background_flush.run_within(kMetricWriteDelay);
    return;
  }
  s.write_now("recording " + std::to_string(values.size()) + " metrics of run " + std::to_string(run_id) +
              " at step " + std::to_string(step));
}

void RunStore::record_event(std::int64_t run_id, const std::string& kind, const std::string& message) {
  Impl& s = *impl_;
  const RecordCallClock::Timed timed(s.record_clock);
  s.buffer(PendingEvent{run_id, utc_now_iso(), kind, message});
  s.write_now("recording a '" + kind + "' event of run " + std::to_string(run_id));
}

void RunStore::record_checkpoint(const CheckpointRecord& checkpoint) {
  Impl& s = *impl_;
  PendingCheckpointChange change{false, checkpoint};
  if (change.record.created_at.empty()) change.record.created_at = utc_now_iso();
  const std::string doing = "recording checkpoint " + checkpoint.path + " of run " + std::to_string(checkpoint.run_id);
  // Not write_now: it leaves the row buffered while the database is busy,
  // and the checkpoint would then be published before the store lists it.
  std::lock_guard lock(s.db_mutex);
  s.buffer(std::move(change));
  try {
    s.note_written(s.write_pending());
  } catch (const SQLite::Exception& error) {
    {
      std::lock_guard buffered(s.buffer_mutex);
      s.pending.withdraw_checkpoint(checkpoint.run_id, checkpoint.path);
    }
    if (is_transient(error)) s.warn_busy_retrying(error);  // for the rows that stay buffered
    throw_store_error(s.path, doing, error);
  }
}

void RunStore::forget_checkpoint(std::int64_t run_id, const std::string& path) {
  Impl& s = *impl_;
  PendingCheckpointChange change{true, {}};
  change.record.run_id = run_id;
  change.record.path = path;
  s.buffer(std::move(change));
  s.write_now("forgetting checkpoint " + path + " of run " + std::to_string(run_id));
}

void RunStore::flush() {
  Impl& s = *impl_;
  std::lock_guard lock(s.db_mutex);
  s.flush_or_keep("writing buffered rows");
}

}  // namespace orchestrate

// The sweeps and sweep_trials tables (migration 8 of share/sql/run_store.sql):
// what `orchestrate sweep` records of a sweep beside its trials' runs.
#include <unistd.h>

#include <SQLiteCpp/Transaction.h>
#include <nlohmann/json.hpp>

#include "orchestrate/error.h"

#include "store/run_liveness.h"
#include "store/run_store_impl.h"
#include "store/store_sql.h"

namespace orchestrate {

namespace {

std::string sweep_label(std::int64_t sweep_id) { return "sweep " + std::to_string(sweep_id); }

std::string overrides_json(const std::vector<std::pair<std::string, std::string>>& overrides) {
  // An array of pairs, not an object: the spec's order of parameters is kept.
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& [key, value] : overrides) pairs.push_back({key, value});
  return pairs.dump();
}

std::vector<std::pair<std::string, std::string>> overrides_from_json(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& pair : nlohmann::json::parse(text)) out.emplace_back(pair.at(0), pair.at(1));
  return out;
}

constexpr const char* kSweepColumns =
    "SELECT id, name, spec_path, spec, recipe_path, metric, mode, scheduler, state, best_trial, started_at,"
    " coalesce(ended_at, ''), host, pid, command_line FROM sweeps ";

SweepRecord read_sweep(SQLite::Statement& row, const std::string& this_host) {
  SweepRecord sweep;
  sweep.id = row.getColumn(0).getInt64();
  sweep.name = row.getColumn(1).getString();
  sweep.spec_path = row.getColumn(2).getString();
  sweep.spec = row.getColumn(3).getString();
  sweep.recipe_path = row.getColumn(4).getString();
  sweep.metric = row.getColumn(5).getString();
  sweep.mode = row.getColumn(6).getString();
  sweep.scheduler = row.getColumn(7).getString();
  sweep.state = row.getColumn(8).getString();
  if (!row.getColumn(9).isNull()) sweep.best_trial = row.getColumn(9).getInt64();
  sweep.started_at = row.getColumn(10).getString();
  sweep.ended_at = row.getColumn(11).getString();
  sweep.host = row.getColumn(12).getString();
  sweep.pid = row.getColumn(13).getInt64();
  sweep.command_line = row.getColumn(14).getString();
  // A controller has no heartbeat: only one on this machine can be seen gone.
  if (sweep.state == "running" && sweep.host == this_host && !process_exists(sweep.pid)) sweep.state = "lost";
  return sweep;
}

SweepTrialRecord read_trial(SQLite::Statement& row) {
  SweepTrialRecord trial;
  trial.sweep_id = row.getColumn(0).getInt64();
  trial.trial = row.getColumn(1).getInt64();
  trial.overrides = overrides_from_json(row.getColumn(2).getString());
  trial.state = row.getColumn(3).getString();
  trial.run_id = row.getColumn(4).isNull() ? 0 : row.getColumn(4).getInt64();
  if (!row.getColumn(5).isNull()) trial.rung = row.getColumn(5).getInt64();
  if (!row.getColumn(6).isNull()) trial.step = row.getColumn(6).getInt64();
  if (!row.getColumn(7).isNull()) trial.value = row.getColumn(7).getDouble();
  trial.reason = row.getColumn(8).getString();
  trial.seconds = row.getColumn(9).getDouble();
  return trial;
}

template <class T>
void bind_optional(SQLite::Statement& statement, int index, const std::optional<T>& value) {
  if (value) statement.bind(index, *value);
  else statement.bind(index);
}

}  // namespace

std::int64_t RunStore::begin_sweep(const SweepRecord& sweep, const std::vector<SweepTrialRecord>& trials) {
  Impl& s = *impl_;
  return s.locked("recording sweep '" + sweep.name + "'", [&] {
    SQLite::Transaction transaction(s.db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement insert(s.db,
                             "INSERT INTO sweeps (name, spec_path, spec, recipe_path, metric, mode, scheduler, state,"
                             " started_at, host, pid, command_line)"
                             " VALUES (?, ?, ?, ?, ?, ?, ?, 'running', " ORCHESTRATE_SQL_NOW ", ?, ?, ?)");
    insert.bind(1, sweep.name);
    insert.bind(2, sweep.spec_path);
    insert.bind(3, sweep.spec);
    insert.bind(4, sweep.recipe_path);
    insert.bind(5, sweep.metric);
    insert.bind(6, sweep.mode);
    insert.bind(7, sweep.scheduler);
    insert.bind(8, s.host);
    insert.bind(9, static_cast<std::int64_t>(getpid()));
    insert.bind(10, sweep.command_line);
    insert.exec();
    const std::int64_t id = s.db.getLastInsertRowid();
    SQLite::Statement add(s.db,
                          "INSERT INTO sweep_trials (sweep_id, trial, overrides, state) VALUES (?, ?, ?, 'pending')");
    for (const SweepTrialRecord& trial : trials) {
      ResetOnExit reset(add);
      add.bind(1, id);
      add.bind(2, trial.trial);
      add.bind(3, overrides_json(trial.overrides));
      add.exec();
    }
    transaction.commit();
    return id;
  });
}

void RunStore::take_up_sweep(std::int64_t sweep_id, const std::string& command_line) {
  Impl& s = *impl_;
  s.locked("resuming " + sweep_label(sweep_id), [&] {
    SQLite::Statement update(s.db,
                             "UPDATE sweeps SET state = 'running', ended_at = NULL, host = ?, pid = ?,"
                             " command_line = ? WHERE id = ?");
    update.bind(1, s.host);
    update.bind(2, static_cast<std::int64_t>(getpid()));
    update.bind(3, command_line);
    update.bind(4, sweep_id);
    if (update.exec() != 1) throw Error("run store " + s.path + ": no " + sweep_label(sweep_id));
  });
}

void RunStore::record_sweep_trial(const SweepTrialRecord& trial) {
  Impl& s = *impl_;
  s.locked("recording trial " + std::to_string(trial.trial) + " of " + sweep_label(trial.sweep_id), [&] {
    SQLite::Statement update(s.db,
                             "UPDATE sweep_trials SET state = ?, run_id = ?, rung = ?, step = ?, value = ?, reason = ?,"
                             " seconds = ? WHERE sweep_id = ? AND trial = ?");
    update.bind(1, trial.state);
    bind_optional(update, 2, trial.run_id ? std::optional<std::int64_t>(trial.run_id) : std::nullopt);
    bind_optional(update, 3, trial.rung);
    bind_optional(update, 4, trial.step);
    bind_optional(update, 5, trial.value);
    update.bind(6, trial.reason);
    update.bind(7, trial.seconds);
    update.bind(8, trial.sweep_id);
    update.bind(9, trial.trial);
    if (update.exec() != 1)
      throw Error("run store " + s.path + ": " + sweep_label(trial.sweep_id) + " has no trial " +
                  std::to_string(trial.trial));
  });
}

void RunStore::set_sweep_best(std::int64_t sweep_id, std::optional<std::int64_t> best_trial) {
  Impl& s = *impl_;
  s.locked("recording the best trial of " + sweep_label(sweep_id), [&] {
    SQLite::Statement update(s.db, "UPDATE sweeps SET best_trial = ? WHERE id = ?");
    bind_optional(update, 1, best_trial);
    update.bind(2, sweep_id);
    update.exec();
  });
}

void RunStore::end_sweep(std::int64_t sweep_id, const std::string& state) {
  Impl& s = *impl_;
  s.locked("ending " + sweep_label(sweep_id), [&] {
    SQLite::Statement update(s.db, "UPDATE sweeps SET state = ?, ended_at = " ORCHESTRATE_SQL_NOW " WHERE id = ?");
    update.bind(1, state);
    update.bind(2, sweep_id);
    update.exec();
  });
}

std::vector<SweepRecord> RunStore::list_sweeps() const {
  Impl& s = *impl_;
  return s.locked("listing sweeps", [&] {
    SQLite::Statement query(s.db, std::string(kSweepColumns) + "ORDER BY id DESC");
    std::vector<SweepRecord> out;
    while (query.executeStep()) out.push_back(read_sweep(query, s.host));
    return out;
  });
}

std::optional<SweepDetails> RunStore::find_sweep(const std::string& id_or_name) const {
  Impl& s = *impl_;
  return s.locked("reading sweep '" + id_or_name + "'", [&]() -> std::optional<SweepDetails> {
    std::int64_t id = 0;
    const bool numeric = parse_id(id_or_name, id);
    SQLite::Statement by_id(s.db, std::string(kSweepColumns) + "WHERE id = ?");
    by_id.bind(1, id);
    SQLite::Statement by_name(s.db, std::string(kSweepColumns) + "WHERE name = ? ORDER BY id DESC LIMIT 1");
    by_name.bind(1, id_or_name);
    SQLite::Statement* found = numeric && by_id.executeStep() ? &by_id : by_name.executeStep() ? &by_name : nullptr;
    if (!found) return std::nullopt;
    SweepDetails details{read_sweep(*found, s.host), {}};
    SQLite::Statement trials(s.db,
                             "SELECT sweep_id, trial, overrides, state, run_id, rung, step, value, reason, seconds"
                             " FROM sweep_trials WHERE sweep_id = ? ORDER BY trial");
    trials.bind(1, details.sweep.id);
    while (trials.executeStep()) details.trials.push_back(read_trial(trials));
    return details;
  });
}

}  // namespace orchestrate

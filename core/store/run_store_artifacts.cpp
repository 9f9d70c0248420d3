// What a run leaves besides steps and metrics: its checkpoints, what
// transfer learning did with each tensor, and its events. These are read
// rarely, so their statements are prepared per call rather than kept.
#include <algorithm>
#include <limits>

#include <SQLiteCpp/Transaction.h>
#include <nlohmann/json.hpp>

#include "orchestrate/error.h"
#include "store/run_store_impl.h"
#include "store/store_sql.h"

namespace orchestrate {
namespace {

std::string run_label(std::int64_t run_id) { return "run " + std::to_string(run_id); }

bool is_tensor_action(const std::string& action) {
  return std::any_of(std::begin(kTensorActions), std::end(kTensorActions),
                     [&](const char* known) { return action == known; });
}

std::string tensor_actions_list() {
  std::string list;
  for (const char* action : kTensorActions) list += (list.empty() ? "" : ", ") + std::string(action);
  return list;
}

// The checkpoints.metrics column: a JSON object of numbers, null for NaN.
std::map<std::string, double> parse_metrics(const std::string& text, const std::string& path,
                                            const std::string& checkpoint) {
  const nlohmann::json object = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) {
    throw Error("run store " + path + ": the metrics of checkpoint " + checkpoint +
                " are not a JSON object; the file was changed by hand or is damaged");
  }
  std::map<std::string, double> metrics;
  for (const auto& [name, value] : object.items()) {
    metrics[name] = value.is_number() ? value.get<double>() : std::numeric_limits<double>::quiet_NaN();
  }
  return metrics;
}

}  // namespace

std::vector<CheckpointRecord> RunStore::checkpoints(std::int64_t run_id) const {
  Impl& s = *impl_;
  return s.locked("reading the checkpoints of " + run_label(run_id), [&] {
    SQLite::Statement query(s.db,
                            "SELECT step, epoch, path, bytes, created_at, metrics, reason FROM checkpoints"
                            " WHERE run_id = ? ORDER BY step, id");
    query.bind(1, run_id);
    std::vector<CheckpointRecord> checkpoints;
    while (query.executeStep()) {
      CheckpointRecord checkpoint;
      checkpoint.run_id = run_id;
      checkpoint.step = query.getColumn(0).getInt64();
      checkpoint.epoch = query.getColumn(1).getInt64();
      checkpoint.path = query.getColumn(2).getString();
      checkpoint.bytes = query.getColumn(3).getInt64();
      checkpoint.created_at = query.getColumn(4).getString();
      checkpoint.metrics = parse_metrics(query.getColumn(5).getString(), s.path, checkpoint.path);
      checkpoint.reason = query.getColumn(6).getString();
      checkpoints.push_back(std::move(checkpoint));
    }
    return checkpoints;
  });
}

void RunStore::record_tensors(std::int64_t run_id, const std::vector<TensorRecord>& tensors) {
  Impl& s = *impl_;
  for (const TensorRecord& tensor : tensors) {
    if (!is_tensor_action(tensor.action)) {
      throw Error("run store " + s.path + ": tensor '" + tensor.name + "' of " + run_label(run_id) +
                  " has action '" + tensor.action + "'; known actions: " + tensor_actions_list());
    }
  }
  s.locked("recording the tensors of " + run_label(run_id), [&] {
    SQLite::Transaction transaction(s.db, SQLite::TransactionBehavior::IMMEDIATE);
    // Replaced, not added to: recording them again (a retried start) must not list a tensor twice.
    SQLite::Statement clear(s.db, "DELETE FROM run_tensors WHERE run_id = ?");
    clear.bind(1, run_id);
    clear.exec();
    SQLite::Statement insert(s.db, "INSERT INTO run_tensors (run_id, name, shape, action, detail) VALUES (?, ?, ?, ?, ?)");
    for (const TensorRecord& tensor : tensors) {
      ResetOnExit reset(insert);
      insert.bind(1, run_id);
      insert.bind(2, tensor.name);
      insert.bind(3, tensor.shape);
      insert.bind(4, tensor.action);
      insert.bind(5, tensor.detail);
      insert.exec();
    }
    transaction.commit();
  });
}

std::vector<TensorRecord> RunStore::tensors(std::int64_t run_id) const {
  Impl& s = *impl_;
  return s.locked("reading the tensors of " + run_label(run_id), [&] {
    SQLite::Statement query(s.db, "SELECT name, shape, action, detail FROM run_tensors WHERE run_id = ? ORDER BY rowid");
    query.bind(1, run_id);
    std::vector<TensorRecord> tensors;
    while (query.executeStep()) {
      tensors.push_back({query.getColumn(0).getString(), query.getColumn(1).getString(),
                         query.getColumn(2).getString(), query.getColumn(3).getString()});
    }
    return tensors;
  });
}

std::vector<EventRecord> RunStore::events(std::int64_t run_id) const {
  Impl& s = *impl_;
  return s.locked("reading the events of " + run_label(run_id), [&] {
    SQLite::Statement query(s.db, "SELECT time, kind, message FROM events WHERE run_id = ? ORDER BY id");
    query.bind(1, run_id);
    std::vector<EventRecord> events;
    while (query.executeStep()) {
      events.push_back({query.getColumn(0).getString(), query.getColumn(1).getString(), query.getColumn(2).getString()});
    }
    return events;
  });
}

}  // namespace orchestrate

// The query side of the run store: runs selected by a filter (`orchestrate
// runs`) and everything recorded about one run (`show`, `compare`).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <set>

#include "orchestrate/closest_match.h"
#include "orchestrate/error.h"
#include "store/run_store.h"
#include "store/run_store_impl.h"
#include "store/store_sql.h"

namespace orchestrate {
namespace {

constexpr const char* kStatuses = "running, finished, failed, interrupted, lost";
constexpr const char* kSinceHelp =
    "expected a UTC date or time (2026-11-22, 2026-11-22T14:30) or an age (30m, 12h, 7d)";

// A WHERE clause built from the filter: its conditions and their bound values, in order.
struct Conditions {
  std::vector<std::string> sql;
  std::vector<std::string> values;

  void add(std::string condition, std::vector<std::string> bound) {
    sql.push_back(std::move(condition));
    values.insert(values.end(), bound.begin(), bound.end());
  }
  std::string where() const {
    std::string text;
    for (const std::string& condition : sql) text += (text.empty() ? " WHERE " : " AND ") + condition;
    return text;
  }
};

void check_status(const std::string& status) {
  for (RunStatus known : {RunStatus::running, RunStatus::finished, RunStatus::failed, RunStatus::interrupted,
                          RunStatus::lost})
    if (status == to_string(known)) return;
  throw UsageError("--status " + status + ": unknown status (known: " + kStatuses + ")");
}

// "7d" -> "-7 days", the modifier SQLite's date functions take; "" when `since` is not an age.
std::string age_modifier(const std::string& since) {
  if (since.size() < 2 || !std::all_of(since.begin(), since.end() - 1, [](unsigned char c) { return std::isdigit(c); }))
    return "";
  const std::string count = since.substr(0, since.size() - 1);
  switch (since.back()) {
    case 'm': return "-" + count + " minutes";
    case 'h': return "-" + count + " hours";
    case 'd': return "-" + count + " days";
    default: return "";
  }
}

// `since` as the stored started_at format, so the comparison is between texts
// of one format (ISO-8601 with milliseconds and Z sorts as time does).
std::string since_as_stored_time(SQLite::Database& db, const std::string& since) {
  const std::string age = age_modifier(since);
  SQLite::Statement convert(db, "SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ?, ?)");
  convert.bind(1, age.empty() ? since : std::string("now"));
  convert.bind(2, age.empty() ? std::string("+0 seconds") : age);
  convert.executeStep();
  if (convert.getColumn(0).isNull()) throw UsageError("--since " + since + ": " + kSinceHelp);
  return convert.getColumn(0).getString();
}

// The recipe as the user names it, without a leading "./", which the stored path may lack.
std::string recipe_glob(const std::string& recipe) {
  std::string glob = std::filesystem::path(recipe).lexically_normal().string();
  return glob.empty() ? recipe : glob;
}

Conditions conditions_of(SQLite::Database& db, const RunFilter& filter) {
  Conditions where;
  if (!filter.name_glob.empty()) where.add("name GLOB ?", {filter.name_glob});
  if (!filter.status.empty()) {
    check_status(filter.status);
    // lost is derived from a stored running (read_summary tells them apart).
    const bool stored_running = filter.status == to_string(RunStatus::lost);
    where.add("status = ?", {stored_running ? std::string(to_string(RunStatus::running)) : filter.status});
  }
  if (!filter.recipe.empty()) {
    const std::string glob = recipe_glob(filter.recipe);
    where.add("(recipe_path GLOB ? OR recipe_path GLOB '*/' || ?)", {glob, glob});
  }
  if (!filter.since.empty()) where.add("started_at >= ?", {since_as_stored_time(db, filter.since)});
  for (const auto& [key, value] : filter.tags)
    where.add("EXISTS (SELECT 1 FROM run_tags WHERE run_id = runs.id AND key = ? AND value = ?)", {key, value});
  return where;
}

bool is_metric_sort(const std::string& key) {
  static const std::set<std::string> columns = {"", "id", "started", "duration", "name", "status"};
  return columns.count(key) == 0;
}

// ORDER BY for `filter`; a metric sort orders by the column sort_value (see find_runs).
std::string order_of(const RunFilter& filter) {
  const std::string key = filter.sort_by;
  const char* high_first = filter.reverse ? " ASC" : " DESC";
  const char* low_first = filter.reverse ? " DESC" : " ASC";
  if (key.empty() || key == "id" || key == "started") return std::string(" ORDER BY id") + high_first;
  if (key == "duration") return std::string(" ORDER BY duration_order") + high_first + ", id DESC";
  if (key == "name" || key == "status") return " ORDER BY " + key + low_first + ", id DESC";
  return std::string(" ORDER BY sort_value IS NULL, sort_value") + high_first + ", id DESC";
}

// A metric to sort by that none of the runs has is a typo far more often than a question.
void check_sort_metric(const RunFilter& filter, const std::vector<RunSummary>& runs) {
  if (runs.empty() || !is_metric_sort(filter.sort_by)) return;
  std::set<std::string> known;
  for (const RunSummary& run : runs) {
    if (run.final_metrics.count(filter.sort_by)) return;
    for (const auto& [name, value] : run.final_metrics) known.insert(name);
  }
  std::string list;
  for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
  std::vector<std::string> names(known.begin(), known.end());
  names.insert(names.end(), {"id", "started", "duration", "name", "status"});
  const std::string nearest = closest_match(filter.sort_by, names);
  throw UsageError("--sort " + filter.sort_by + ": not a column (id, started, duration, name, status) nor a " +
                   "metric of these runs" + (nearest.empty() ? "" : "; did you mean " + nearest + "?") + " (" +
                   (list.empty() ? std::string("they have none") : list) + ")");
}

}  // namespace

std::vector<RunSummary> RunStore::find_runs(const RunFilter& filter) const {
  Impl& s = *impl_;
  return s.locked("listing runs", [&] {
    const Conditions where = conditions_of(s.db, filter);
    // Which stored running runs are lost is known only after reading them,
    // so for those two statuses the limit is applied here, not in SQL.
    const bool limit_after_reading =
        filter.status == to_string(RunStatus::running) || filter.status == to_string(RunStatus::lost);
    std::string sql = kSummaryColumns;
    sql += ", (julianday(coalesce(ended_at, 'now')) - julianday(started_at)) * 86400.0 - paused_s AS duration_order";
    if (is_metric_sort(filter.sort_by)) {
      // Served by the index metrics_by_run (run_id, name, step).
      sql += ", (SELECT value FROM metrics WHERE run_id = runs.id AND name = ? ORDER BY step DESC, id DESC LIMIT 1)"
             " AS sort_value";
    }
    sql += " FROM runs" + where.where() + order_of(filter);
    if (filter.limit > 0 && !limit_after_reading) sql += " LIMIT " + std::to_string(filter.limit);

    SQLite::Statement query(s.db, sql);
    int index = 1;
    if (is_metric_sort(filter.sort_by)) query.bind(index++, filter.sort_by);
    for (const std::string& value : where.values) query.bind(index++, value);
    std::vector<RunSummary> runs = s.read_summaries(query);

    if (!filter.status.empty()) {
      std::erase_if(runs, [&](const RunSummary& run) { return run.status != filter.status; });
    }
    if (filter.limit > 0 && runs.size() > filter.limit) runs.resize(filter.limit);
    check_sort_metric(filter, runs);
    return runs;
  });
}

RunDetails RunStore::run_details(const RunSummary& run) const {
  Impl& s = *impl_;
  return s.locked("reading run " + std::to_string(run.id), [&] {
    RunDetails details;
    details.summary = run;
    RunRecord& record = details.record;
    SQLite::Statement row(s.db,
                          "SELECT name, recipe_path, resolved_recipe, orchestrate_version, torch_version, host,"
                          " device, git_revision, world_size, command_line FROM runs WHERE id = ?");
    row.bind(1, run.id);
    if (!row.executeStep())
      throw Error("run store " + s.path + ": no run " + std::to_string(run.id) + "; `orchestrate runs` lists the runs");
    record.name = row.getColumn(0).getString();
    record.recipe_path = row.getColumn(1).getString();
    record.resolved_recipe = row.getColumn(2).getString();
    record.orchestrate_version = row.getColumn(3).getString();
    record.torch_version = row.getColumn(4).getString();
    record.host = row.getColumn(5).getString();
    record.device = row.getColumn(6).getString();
    record.git_revision = row.getColumn(7).getString();
    record.world_size = row.getColumn(8).getInt();
    details.command_line = row.getColumn(9).getString();
    record.kind = run.kind == to_string(RunKind::eval) ? RunKind::eval : RunKind::train;
    record.source_run_id = run.source_run_id;

    SQLite::Statement plugins(s.db,
                              "SELECT name, version, library_path, sha256 FROM run_plugins WHERE run_id = ?"
                              " ORDER BY name");
    plugins.bind(1, run.id);
    while (plugins.executeStep()) {
      record.plugins.push_back({plugins.getColumn(0).getString(), plugins.getColumn(1).getString(),
                                plugins.getColumn(2).getString(), plugins.getColumn(3).getString()});
    }
    SQLite::Statement params(s.db, "SELECT key, value FROM run_params WHERE run_id = ? ORDER BY key");
    params.bind(1, run.id);
    while (params.executeStep()) record.params.emplace_back(params.getColumn(0).getString(), params.getColumn(1).getString());

    // min() and max() skip NULL, the stored NaN; a metric that was only ever NaN reads NaN.
    SQLite::Statement extremes(s.db, "SELECT name, min(value), max(value) FROM metrics WHERE run_id = ? GROUP BY name");
    extremes.bind(1, run.id);
    while (extremes.executeStep()) {
      details.metric_extremes[extremes.getColumn(0).getString()] = {real_column(extremes, 1), real_column(extremes, 2)};
    }
    return details;
  });
}

}  // namespace orchestrate

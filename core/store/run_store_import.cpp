// `orchestrate store import`: another store file's runs copied into this one
// (the run_imports table of migration 8 of share/sql/run_store.sql). SQLite
// copies them itself, table by table (ATTACH, INSERT ... SELECT), so every
// column of every table comes along without this file naming them.
#include <filesystem>

#include <SQLiteCpp/Transaction.h>

#include "orchestrate/error.h"
#include "store/read_only_database.h"
#include "store/run_store_impl.h"
#include "store/store_sql.h"

namespace orchestrate {

namespace {

namespace fs = std::filesystem;

// The tables that hang off a run, and whether each has an id of its own
// (which the copy takes anew here, in the source's order).
struct RunTable {
  const char* name;
  bool own_id;
};
constexpr RunTable kRunTables[] = {{"run_plugins", false}, {"run_params", false}, {"run_tags", false},
                                   {"metrics", true},      {"step_timings", false}, {"events", true},
                                   {"checkpoints", true},  {"run_tensors", false}};

// A table's columns here, less those named in `except`, comma-separated.
std::string columns_of(SQLite::Database& db, const std::string& table, std::initializer_list<const char*> except) {
  SQLite::Statement info(db, "SELECT name FROM pragma_table_info(?)");
  info.bind(1, table);
  std::string out;
  while (info.executeStep()) {
    const std::string column = info.getColumn(0).getString();
    bool skipped = false;
    for (const char* name : except) skipped = skipped || column == name;
    if (!skipped) out += (out.empty() ? "" : ", ") + column;
  }
  return out;
}

// The attached source, detached however the import ends.
class Attached {
 public:
  Attached(SQLite::Database& db, const std::string& path) : db_(db) {
    SQLite::Statement attach(db_, "ATTACH DATABASE ? AS source");
    attach.bind(1, path);
    attach.exec();
  }
  ~Attached() {
    try {
      db_.exec("DETACH DATABASE source");
    } catch (...) {
      // nothing to do: the connection closes with it attached at worst
    }
  }
  Attached(const Attached&) = delete;
  Attached& operator=(const Attached&) = delete;

 private:
  SQLite::Database& db_;
};

}  // namespace

std::map<std::int64_t, std::int64_t> RunStore::import_runs(const std::string& source) {
  Impl& s = *impl_;
  std::error_code error;
  const fs::path from = fs::weakly_canonical(fs::absolute(source), error);
  if (!fs::is_regular_file(from)) throw Error("store import: " + source + " is not a file");
  if (fs::equivalent(from, fs::absolute(s.path), error))
    throw Error("store import: " + source + " is this store (" + s.path + ")");
  // Its schema checked as a query checks it: a run store of this build's version, opened without writing.
  try {
    open_database_for_reading(from.string());
  } catch (const SQLite::Exception& failure) {
    throw Error("store import: " + source + ": " + failure.what());
  }
  return s.locked("importing the runs of " + source, [&] {
    const std::string run_columns = columns_of(s.db, "runs", {"id", "source_run_id"});
    Attached attached(s.db, from.string());
    SQLite::Transaction transaction(s.db, SQLite::TransactionBehavior::IMMEDIATE);
    std::map<std::int64_t, std::int64_t> ids;
    std::vector<std::pair<std::int64_t, std::int64_t>> sources;  // run here -> its source run there
    SQLite::Statement runs(s.db, "SELECT id, coalesce(source_run_id, 0) FROM source.runs ORDER BY id");
    while (runs.executeStep()) {
      const std::int64_t there = runs.getColumn(0).getInt64();
      SQLite::Statement known(s.db, "SELECT run_id FROM run_imports WHERE source = ? AND source_run_id = ?");
      known.bind(1, from.string());
      known.bind(2, there);
      std::int64_t here = 0;
      if (known.executeStep()) {
        here = known.getColumn(0).getInt64();
        // Updated in place: rows elsewhere that name this run (a sweep's trials) keep naming it.
        SQLite::Statement update(s.db, "UPDATE runs SET (" + run_columns + ") = (SELECT " + run_columns +
                                           " FROM source.runs WHERE id = ?) WHERE id = ?");
        update.bind(1, there);
        update.bind(2, here);
        update.exec();
        for (const RunTable& table : kRunTables) {
          SQLite::Statement clear(s.db, std::string("DELETE FROM ") + table.name + " WHERE run_id = ?");
          clear.bind(1, here);
          clear.exec();
        }
      } else {
        SQLite::Statement insert(s.db, "INSERT INTO runs (" + run_columns + ") SELECT " + run_columns +
                                           " FROM source.runs WHERE id = ?");
        insert.bind(1, there);
        insert.exec();
        here = s.db.getLastInsertRowid();
      }
      for (const RunTable& table : kRunTables) {
        const std::string columns =
            table.own_id ? columns_of(s.db, table.name, {"id", "run_id"}) : columns_of(s.db, table.name, {"run_id"});
        SQLite::Statement copy(s.db, std::string("INSERT INTO ") + table.name + " (run_id, " + columns +
                                         ") SELECT ?, " + columns + " FROM source." + table.name +
                                         " WHERE run_id = ?" + (table.own_id ? " ORDER BY id" : ""));
        copy.bind(1, here);
        copy.bind(2, there);
        copy.exec();
      }
      SQLite::Statement note(s.db,
                             "INSERT INTO run_imports (run_id, source, source_run_id, imported_at)"
                             " VALUES (?, ?, ?, " ORCHESTRATE_SQL_NOW ") ON CONFLICT (run_id) DO UPDATE"
                             " SET imported_at = excluded.imported_at");
      note.bind(1, here);
      note.bind(2, from.string());
      note.bind(3, there);
      note.exec();
      ids[there] = here;
      sources.emplace_back(here, runs.getColumn(1).getInt64());
    }
    // An eval run's source, when that run came along too; otherwise none here.
    for (const auto& [here, there] : sources) {
      SQLite::Statement link(s.db, "UPDATE runs SET source_run_id = ? WHERE id = ?");
      if (const auto found = ids.find(there); there != 0 && found != ids.end()) link.bind(1, found->second);
      else link.bind(1);
      link.bind(2, here);
      link.exec();
    }
    transaction.commit();
    return ids;
  });
}

}  // namespace orchestrate

#include "store/run_store_schema.h"

#include <charconv>
#include <chrono>
#include <thread>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>

#include "orchestrate/error.h"
#include "run_store_sql.h"  // generated from share/sql/run_store.sql: kRunStoreSql

namespace orchestrate {
namespace {

constexpr std::string_view kMarker = "-- migration:";
// As long as a write waits for another process's lock (the store's default busy timeout).
constexpr std::chrono::seconds kJournalSwitchTimeout{5};

// The number after the marker, or 0 when `line` is not a marker line.
int migration_number(std::string_view line) {
  if (!line.starts_with(kMarker)) return 0;
  line.remove_prefix(kMarker.size());
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
  int number = 0;
  auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), number);
  if (error != std::errc() || end != line.data() + line.size() || number <= 0) {
    throw Error("run store schema: bad migration marker '" + std::string(kMarker) + std::string(line) +
                "'; expected '-- migration: N' with N a positive integer (fix share/sql/run_store.sql and rebuild)");
  }
  return number;
}

struct StoreIdentity {
  int application_id = 0;
  int schema_version = 0;
  bool has_tables = false;
};

// One statement, so one snapshot: read one by one, a migration another
// process commits in between would show tables without our application id,
// which looks like another application's database.
StoreIdentity read_identity(SQLite::Database& db) {
  SQLite::Statement query(db,
                          "SELECT (SELECT application_id FROM pragma_application_id),"
                          " (SELECT user_version FROM pragma_user_version),"
                          " (SELECT count(*) FROM sqlite_master)");
  query.executeStep();
  StoreIdentity identity;
  identity.application_id = query.getColumn(0).getInt();
  identity.schema_version = query.getColumn(1).getInt();
  identity.has_tables = query.getColumn(2).getInt() > 0;
  return identity;
}

// Switching a new file to WAL takes an exclusive lock, and SQLite answers
// SQLITE_BUSY at once, without waiting the busy timeout, while another
// process opening the same new file holds a lock; so the switch is retried.
// A file already in WAL needs no lock at all.
void use_write_ahead_log(SQLite::Database& db) {
  if (db.execAndGet("PRAGMA journal_mode").getString() == "wal") return;
  const auto give_up_at = std::chrono::steady_clock::now() + kJournalSwitchTimeout;
  for (;;) {
    try {
      db.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (const SQLite::Exception& error) {
      if ((error.getErrorCode() & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= give_up_at) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

// Returns `identity` when it is acceptable.
const StoreIdentity& check_identity(const StoreIdentity& identity, const std::string& path) {
  const bool empty = identity.application_id == 0 && !identity.has_tables;
  if (identity.application_id != kRunStoreApplicationId && !empty) {
    throw Error(path + " is a SQLite database of another application, not an orchestrate run store; " +
                "set ORCHESTRATE_DB to another file");
  }
  if (identity.schema_version > latest_schema_version()) {
    throw Error(path + " has run-store schema version " + std::to_string(identity.schema_version) +
                ", newer than this orchestrate understands (" + std::to_string(latest_schema_version()) +
                "); use a newer orchestrate or set ORCHESTRATE_DB to another file");
  }
  return identity;
}

}  // namespace

std::vector<SchemaMigration> parse_schema_migrations(std::string_view schema_sql) {
  std::vector<SchemaMigration> migrations;
  while (!schema_sql.empty()) {
    const std::size_t line_end = schema_sql.find('\n');
    const std::string_view line = schema_sql.substr(0, line_end);
    schema_sql.remove_prefix(line_end == std::string_view::npos ? schema_sql.size() : line_end + 1);

    if (const int number = migration_number(line)) {
      if (number != static_cast<int>(migrations.size()) + 1) {
        throw Error("run store schema: migration " + std::to_string(number) + " follows " +
                    std::to_string(migrations.size()) + "; number them 1, 2, 3, ... in share/sql/run_store.sql");
      }
      migrations.push_back({number, {}});
    } else if (!migrations.empty()) {
      migrations.back().sql.append(line).push_back('\n');
    }  // text before the first marker is the file's header comment
  }
  if (migrations.empty()) throw Error("run store schema: no '-- migration: 1' line in share/sql/run_store.sql");
  return migrations;
}

int latest_schema_version() {
  static const int latest = parse_schema_migrations(kRunStoreSql).back().version;
  return latest;
}

void prepare_run_store_schema(SQLite::Database& db, const std::string& path) {
  // Checked before anything is written, so another application's file is
  // left exactly as it was.
  const StoreIdentity found = check_identity(read_identity(db), path);

  // WAL lets readers (`orchestrate runs`) work while a run writes; NORMAL
  // sync is safe in WAL (a power cut may lose the last commits, never
  // corrupt the file) and saves an fsync per commit.
  use_write_ahead_log(db);
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  // Up to date: no write lock is taken, so `orchestrate runs` opens a store
  // while another process holds a long write transaction.
  if (found.schema_version == latest_schema_version()) return;

  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  // Read again under the write lock: another process may have migrated the
  // file since the check above.
  const StoreIdentity identity = read_identity(db);
  check_identity(identity, path);
  if (identity.schema_version == latest_schema_version()) return;  // nothing to write; rolls back

  for (const SchemaMigration& migration : parse_schema_migrations(kRunStoreSql)) {
    if (migration.version > identity.schema_version) db.exec(migration.sql);
  }
  // PRAGMAs take no bound parameters; both values are integers of ours.
  db.exec("PRAGMA user_version = " + std::to_string(latest_schema_version()));
  db.exec("PRAGMA application_id = " + std::to_string(kRunStoreApplicationId));
  transaction.commit();
}

void check_run_store_schema_for_reading(SQLite::Database& db, const std::string& path) {
  const StoreIdentity found = check_identity(read_identity(db), path);
  if (found.application_id == 0 && !found.has_tables)
    throw Error(path + " is empty: no run has been recorded in it yet (runs are recorded by orchestrate run)");
  if (found.schema_version < latest_schema_version()) {
    throw Error(path + " has run-store schema version " + std::to_string(found.schema_version) + ", older than " +
                "this orchestrate's " + std::to_string(latest_schema_version()) + "; queries never change the " +
                "file: upgrade it once with `orchestrate store upgrade --db " + path + "` (a run with it does too)");
  }
}

}  // namespace orchestrate

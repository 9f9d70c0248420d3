// The versioned schema of the run store. share/sql/run_store.sql, compiled in,
// is a list of numbered migrations; a database records in PRAGMA user_version
// the last one applied and in PRAGMA application_id that it is ours.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace SQLite {
class Database;
}

namespace orchestrate {

// "ORCH": marks a SQLite file as an orchestrate run store, so another
// application's database is refused instead of being written into.
inline constexpr std::int32_t kRunStoreApplicationId = 0x4F524348;

struct SchemaMigration {
  int version = 0;
  std::string sql;
};

// Splits schema text at its "-- migration: N" lines. Throws Error unless the
// versions run 1, 2, 3, ... without gaps (a broken build, not a user mistake).
std::vector<SchemaMigration> parse_schema_migrations(std::string_view schema_sql);

// The version of the compiled-in schema: its last migration's number.
int latest_schema_version();

// Checks that `db` is empty or an orchestrate run store no newer than this
// build, then applies the migrations it lacks in one BEGIN IMMEDIATE
// transaction (so two processes creating the same file do not race).
// Throws Error naming `path` otherwise.
void prepare_run_store_schema(SQLite::Database& db, const std::string& path);

// For a connection opened read-only (the query commands): checks that `db` is
// an orchestrate run store of exactly this build's schema, writing nothing.
// An older one is refused rather than read: its tables lack what the queries
// read, and upgrading it is a write that a query must never do (the file may
// be read-only, or a run of an older orchestrate may still be writing it).
// Throws Error naming `path` and saying how to upgrade it.
void check_run_store_schema_for_reading(SQLite::Database& db, const std::string& path);

}  // namespace orchestrate

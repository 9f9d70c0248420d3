// A run store as the first release left it, for the tests of upgrading one
// (run_store_migration_test, `orchestrate store upgrade`'s). Needs the
// generated run_store_sql.h on the include path.
#pragma once

#include <string>

#include <SQLiteCpp/Database.h>

#include "run_store_sql.h"  // generated from share/sql/run_store.sql: kRunStoreSql
#include "store/run_store_schema.h"

namespace orchestrate::testing {

// Migration 1 alone, with the rows `inserts` (SQL statements) writes.
inline void write_first_release_store(const std::string& path, const std::string& inserts) {
  SQLite::Database v1(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  v1.exec(parse_schema_migrations(kRunStoreSql).at(0).sql);
  v1.exec("PRAGMA user_version = 1");
  v1.exec("PRAGMA application_id = " + std::to_string(kRunStoreApplicationId));
  v1.exec(inserts);
}

}  // namespace orchestrate::testing

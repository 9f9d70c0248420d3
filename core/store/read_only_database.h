// Opening a run store for a query: read-only, on a file the user may not be
// allowed to write, beside a process that may be writing it. Private to core/store.
#pragma once

#include <string>

#include <SQLiteCpp/Database.h>

namespace orchestrate {

// Opens `path` read-only and checks it is a run store of this build's schema
// (check_run_store_schema_for_reading). Never creates, migrates or writes it.
// Throws SQLite::Exception or Error.
SQLite::Database open_database_for_reading(const std::string& path);

}  // namespace orchestrate

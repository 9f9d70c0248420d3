#include "store/read_only_database.h"

#include <filesystem>

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include "store/run_store_impl.h"
#include "store/run_store_schema.h"

namespace orchestrate {
namespace {

// A path as a URI filename: the characters a URI gives a meaning to are escaped.
std::string uri_of(const std::string& path) {
  std::string uri = "file:";
  for (char ch : path) {
    if (ch == '%') uri += "%25";
    else if (ch == '?') uri += "%3f";
    else if (ch == '#') uri += "%23";
    else uri += ch;
  }
  return uri;
}

}  // namespace

SQLite::Database open_database_for_reading(const std::string& path) {
  const int busy_ms = static_cast<int>(kDefaultBusyTimeout.count());
  try {
    SQLite::Database db(path, SQLite::OPEN_READONLY, busy_ms);
    check_run_store_schema_for_reading(db, path);  // the first read: where a WAL file that cannot be opened fails
    return db;
  } catch (const SQLite::Exception& error) {
    // A reader of a WAL database needs its -shm file, and creates it when it
    // is missing; in a directory the user cannot write that fails. Without a
    // -wal file no process is writing and every row is in the main file, so
    // reading that file as immutable (no locks, no -shm) reads it whole.
    // With a -wal file a writer may be at work: immutable could read a torn
    // state, so the error stands.
    const int code = error.getErrorCode() & 0xff;
    const bool cannot_share = code == SQLITE_READONLY || code == SQLITE_CANTOPEN;
    if (!cannot_share || !std::filesystem::exists(path) || std::filesystem::exists(path + "-wal")) throw;
  }
  SQLite::Database db(uri_of(path) + "?immutable=1", SQLite::OPEN_READONLY | SQLite::OPEN_URI, busy_ms);
  check_run_store_schema_for_reading(db, path);
  return db;
}

}  // namespace orchestrate

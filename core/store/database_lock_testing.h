// For tests: another process's long write transaction, held by a second
// connection, so the run store under test finds its database busy.
#pragma once

#include <string>

#include <SQLiteCpp/Database.h>

namespace orchestrate::testing {

class DatabaseLock {
 public:
  explicit DatabaseLock(const std::string& path) : db_(path, SQLite::OPEN_READWRITE) { db_.exec("BEGIN EXCLUSIVE"); }
  void release() {
    if (held_) db_.exec("ROLLBACK");
    held_ = false;
  }
  ~DatabaseLock() { release(); }
  DatabaseLock(const DatabaseLock&) = delete;
  DatabaseLock& operator=(const DatabaseLock&) = delete;

 private:
  SQLite::Database db_;
  bool held_ = true;
};

}  // namespace orchestrate::testing

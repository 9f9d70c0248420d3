#include "store/store_error.h"

#include <filesystem>

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include "orchestrate/error.h"

namespace orchestrate {
namespace {

std::string advice_for(int primary_code) {
  switch (primary_code) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "another process kept the database locked past the busy timeout; retry, or use another file";
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return "check that the file and its directory exist and are writable, or set ORCHESTRATE_DB to another file";
    case SQLITE_FULL:
    case SQLITE_IOERR:
      return "check free disk space and the file system";
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return "it is not an orchestrate run store, or it is damaged; move it away or set ORCHESTRATE_DB to another file";
    case SQLITE_CONSTRAINT:
      return "a step, metric or event names a run id that is not in this database, or a run lists a parameter twice";
    default:
      return "set ORCHESTRATE_DB to another file if this one is damaged";
  }
}

}  // namespace

void throw_store_error(const std::string& path, const std::string& doing, const std::exception& cause) {
  std::string message = "run store " + path + ": " + doing + " failed: " + cause.what();
  if (const auto* sqlite = dynamic_cast<const SQLite::Exception*>(&cause)) {
    message += "; " + advice_for(sqlite->getErrorCode() & 0xff);
  } else if (dynamic_cast<const std::filesystem::filesystem_error*>(&cause) != nullptr) {
    message += "; check that the directory can be created and written, or set ORCHESTRATE_DB to another file";
  }
  throw Error(message);
}

}  // namespace orchestrate

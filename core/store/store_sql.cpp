#include "store/store_sql.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

namespace orchestrate {

std::string utc_now_iso() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t seconds = system_clock::to_time_t(now);
  const auto millis = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char date_time[32];
  std::strftime(date_time, sizeof date_time, "%Y-%m-%dT%H:%M:%S", &utc);
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, ".%03dZ", static_cast<int>(millis));
  return std::string(date_time) + fraction;
}

void bind_real(SQLite::Statement& statement, int index, double value) {
  if (std::isnan(value)) {
    statement.bind(index);
  } else {
    statement.bind(index, value);
  }
}

double real_column(const SQLite::Statement& statement, int index) {
  if (statement.isColumnNull(index)) return std::numeric_limits<double>::quiet_NaN();
  return statement.getColumn(index).getDouble();
}

bool is_transient(const SQLite::Exception& error) {
  switch (error.getErrorCode() & 0xff) {  // the primary code; extended codes add detail in the high bits
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
      return true;
    default:
      return false;
  }
}

bool parse_id(const std::string& text, std::int64_t& id) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, id);
  return !text.empty() && error == std::errc() && stop == end;
}

}  // namespace orchestrate

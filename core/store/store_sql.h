// Small SQLite helpers shared by the run store's source files.
// Private to core/store: not part of the store's API.
#pragma once

#include <string>

#include <SQLiteCpp/Statement.h>

#include "store/utc_now.h"

namespace SQLite {
class Exception;
}

namespace orchestrate {

// ISO-8601 UTC with milliseconds ("2025-01-31T12:00:00.123Z"), as SQL text;
// julianday() parses it back for durations. utc_now_iso() (utc_now.h) gives
// the same text from C++.
#define ORCHESTRATE_SQL_NOW "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

// Resets a cached statement when a scope ends, also on an exception: a
// statement left mid-way cannot be bound again, and a half-read SELECT keeps
// a read transaction open, which stops WAL checkpoints.
class ResetOnExit {
 public:
  explicit ResetOnExit(SQLite::Statement& statement) : statement_(statement) {}
  ~ResetOnExit() { statement_.tryReset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  SQLite::Statement& statement_;
};

// SQLite stores no NaN (it would turn it into NULL anyway); say so explicitly.
void bind_real(SQLite::Statement& statement, int index, double value);
// NULL reads back as NaN.
double real_column(const SQLite::Statement& statement, int index);

// Failures that may heal by themselves (another process holds the lock, the
// disk is full or briefly failing), so a write is worth retrying later.
// Anything else (a constraint broken by a bug, a damaged file) would fail the
// same way on every try.
bool is_transient(const SQLite::Exception& error);

// A run's or a sweep's id given as text (the "id or name" of find_run and
// find_sweep): all digits, fitting 64 bits.
bool parse_id(const std::string& text, std::int64_t& id);

}  // namespace orchestrate

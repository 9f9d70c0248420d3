// Turns SQLite failures into orchestrate::Error messages that name the
// database file, say what was being done, and say what the user can do.
#pragma once

#include <exception>
#include <string>

namespace orchestrate {

// `doing` reads as a phrase: "recording a metric". When `cause` is a
// SQLite::Exception its error code picks the advice.
[[noreturn]] void throw_store_error(const std::string& path, const std::string& doing, const std::exception& cause);

}  // namespace orchestrate

#include "orchestrate/error.h"

#include <cstdlib>
#include <string_view>

#include "orchestrate/input_limits.h"

namespace orchestrate {

// Destructors are out of line so each error type has one typeinfo, in the SDK
// library, and an exception thrown in a plugin is caught by type in the host.
Error::Error(const std::string& message, ExitCode code) : std::runtime_error(message), code_(code) {}
Error::~Error() = default;
UsageError::UsageError(const std::string& message) : Error(message, ExitCode::usage) {}
UsageError::~UsageError() = default;
RecipeError::RecipeError(const std::string& message) : Error(message, ExitCode::usage) {}
RecipeError::~RecipeError() = default;
PluginError::PluginError(const std::string& message) : Error(message, ExitCode::plugin) {}
PluginError::~PluginError() = default;
DataError::DataError(const std::string& message) : Error(message, ExitCode::runtime_failure) {}
DataError::~DataError() = default;

namespace {

bool debugging() {
  const char* debug = std::getenv("ORCHESTRATE_DEBUG");
  return debug != nullptr && std::string_view(debug) == "1";
}

// c10::Error::what() is "<message>\nException raised from <function> at
// <file>:<line> (most recent call first):\nframe #0: ..." (c10/util/Exception.cpp).
constexpr std::string_view kBacktraceStart = "\nException raised from ";

}  // namespace

std::string exception_reason(const std::exception& error) {
  const std::string what = error.what();
  if (debugging()) return what;
  return what.substr(0, what.find('\n'));
}

std::string error_for_display(const std::string& message) {
  if (debugging()) return message;
  std::string text = message.substr(0, message.find(kBacktraceStart));
  std::size_t lines = 0, at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    if (end == std::string::npos) break;
    if (++lines == limits::kMaxErrorLines) {
      std::size_t rest = 0;
      for (std::size_t i = end; i < text.size(); ++i) rest += text[i] == '\n';
      return text.substr(0, end) + "\n... and " + std::to_string(rest) + " more (the first " +
             std::to_string(limits::kMaxErrorLines) + " are shown)";
    }
    at = end + 1;
  }
  return text;
}

const char* version() { return ORCHESTRATE_VERSION; }

}  // namespace orchestrate

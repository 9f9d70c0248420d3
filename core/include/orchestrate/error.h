// Error types. Every failure a user can cause is one of these, so the CLI can
// map it to an exit code and a one-line message instead of an abort.
#pragma once

#include <stdexcept>
#include <string>

#include "orchestrate/api.h"

namespace orchestrate {

// Exit codes, documented in share/doc/cli.md (and the README, the man page).
enum class ExitCode : int {
  ok = 0,
  runtime_failure = 1,  // training, data or I/O failed at run time
  usage = 2,            // bad command line or recipe
  plugin = 3,           // a plugin could not be loaded or was refused
  regression = 4,       // report regressions flagged a run (a finding, not a failure)
  interrupted = 130,    // SIGINT/SIGTERM: the run was stopped cleanly
};

class ORCHESTRATE_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::runtime_failure);
  ~Error() override;
  ExitCode exit_code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

// A bad command line.
class ORCHESTRATE_API UsageError : public Error {
 public:
  explicit UsageError(const std::string& message);
  ~UsageError() override;
};

// A recipe that does not match the schemas; the message starts with file:line.
class ORCHESTRATE_API RecipeError : public Error {
 public:
  explicit RecipeError(const std::string& message);
  ~RecipeError() override;
};

// A plugin that cannot be loaded, is refused, or names an unknown component.
class ORCHESTRATE_API PluginError : public Error {
 public:
  explicit PluginError(const std::string& message);
  ~PluginError() override;
};

// Bad or missing input data (a corrupt file, a missing data set).
class ORCHESTRATE_API DataError : public Error {
 public:
  explicit DataError(const std::string& message);
  ~DataError() override;
};

// The reason a foreign exception (LibTorch's, the standard library's) gives,
// as one line for a message: c10::Error's what() carries the whole C++
// backtrace after its first line. ORCHESTRATE_DEBUG=1 keeps all of it.
ORCHESTRATE_API std::string exception_reason(const std::exception& error);

// An error message as the CLI prints it: any backtrace a wrapped LibTorch
// message carried cut off (unless ORCHESTRATE_DEBUG=1), and at most
// limits::kMaxErrorLines lines, then "... and N more".
ORCHESTRATE_API std::string error_for_display(const std::string& message);

}  // namespace orchestrate

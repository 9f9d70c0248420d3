#include "orchestrate/error.h"

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

const char* version() { return ORCHESTRATE_VERSION; }

}  // namespace orchestrate

// Export macro and the version numbers a plugin is checked against.
#pragma once

#include <cstdint>

#define ORCHESTRATE_API __attribute__((visibility("default")))

namespace orchestrate {

// Bumped whenever a change to the SDK headers breaks plugins built against an
// older version (a changed interface class, factory signature or descriptor).
inline constexpr std::uint32_t kPluginApiVersion = 10;

ORCHESTRATE_API const char* version();  // orchestrate's own version, "0.1.0"

}  // namespace orchestrate

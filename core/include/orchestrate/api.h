// Export macro and the version numbers a plugin is checked against.
#pragma once

#include <cstdint>  // also defines _GLIBCXX_USE_CXX11_ABI (libstdc++)

// An installed SDK's target carries the C++ ABI it was built with: a plugin
// compiled with the other would link to none of it (and the host refuses
// it), so it stops here, saying why. (The SDK's CMake config says the same
// at configure time for a flag set before find_package.)
#if defined(ORCHESTRATE_SDK_CXX11_ABI) && defined(_GLIBCXX_USE_CXX11_ABI) && \
    _GLIBCXX_USE_CXX11_ABI != ORCHESTRATE_SDK_CXX11_ABI
#error "this plugin compiles with another _GLIBCXX_USE_CXX11_ABI than the orchestrate SDK and LibTorch were built with (ORCHESTRATE_SDK_CXX11_ABI); remove -D_GLIBCXX_USE_CXX11_ABI from its flags"
#endif

#define ORCHESTRATE_API __attribute__((visibility("default")))

namespace orchestrate {

// Bumped whenever a change to the SDK headers breaks plugins built against an
// older version (a changed interface class, factory signature or descriptor).
inline constexpr std::uint32_t kPluginApiVersion = 14;

ORCHESTRATE_API const char* version();  // orchestrate's own version, "0.1.0"

}  // namespace orchestrate

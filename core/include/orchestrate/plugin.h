// The plugin entry point.
//
// A plugin library exports one extern "C" function, orchestrate_plugin_descriptor,
// returning a PluginDescriptor. The host reads `magic` and `api_version` first
// (their layout never changes) and refuses a mismatch before touching anything
// else; then it checks the build identity (LibTorch version, C++ ABI) and only
// then calls `register_components`.
//
//   ORCHESTRATE_PLUGIN("my_plugin", "1.0.0", register_my_components)
#pragma once

#include <cstdint>

#include "orchestrate/api.h"
#include "orchestrate/registry.h"

#if __has_include(<torch/version.h>)
#include <torch/version.h>
#define ORCHESTRATE_TORCH_VERSION TORCH_VERSION
#else
#define ORCHESTRATE_TORCH_VERSION "unknown"
#endif

// Overridable only so the test suite can build a deliberately mismatched plugin.
#ifndef ORCHESTRATE_PLUGIN_API_VERSION
#define ORCHESTRATE_PLUGIN_API_VERSION ::orchestrate::kPluginApiVersion
#endif

namespace orchestrate {

inline constexpr std::uint32_t kPluginMagic = 0x4f524348;  // "ORCH"

extern "C" {
struct PluginDescriptor {
  std::uint32_t magic;        // kPluginMagic
  std::uint32_t api_version;  // kPluginApiVersion of the SDK it was built with
  const char* name;
  const char* version;
  const char* torch_version;  // LibTorch version the plugin was compiled against
  const char* compiler;       // e.g. "GCC 12.2.0"
  int cxx11_abi;              // _GLIBCXX_USE_CXX11_ABI
  void (*register_components)(Registry& registry);
};
}

inline constexpr const char* kPluginEntryPoint = "orchestrate_plugin_descriptor";

}  // namespace orchestrate

// The entry point ORCHESTRATE_PLUGIN defines, declared for a plugin's own
// tests: they link the plugin's code statically and register it by calling it
// (orchestrate/testing/plugin_under_test.h).
extern "C" ORCHESTRATE_API const ::orchestrate::PluginDescriptor* orchestrate_plugin_descriptor();

#define ORCHESTRATE_STRINGIFY_INNER(x) #x
#define ORCHESTRATE_STRINGIFY(x) ORCHESTRATE_STRINGIFY_INNER(x)
#define ORCHESTRATE_COMPILER_ID \
  "GCC " ORCHESTRATE_STRINGIFY(__GNUC__) "." ORCHESTRATE_STRINGIFY(__GNUC_MINOR__) "." ORCHESTRATE_STRINGIFY(__GNUC_PATCHLEVEL__)

// The build identity again, as an ELF note (section .note.orchestrate, owner
// "orchestrate", type 1: the API version and _GLIBCXX_USE_CXX11_ABI as 32-bit
// numbers, then the LibTorch version and the compiler, NUL-terminated). The
// host reads it with libelf before dlopen (core/plugin_file/plugin_build_note.h),
// so a plugin built for another ABI is named as such instead of failing in
// the loader on an undefined symbol.
#define ORCHESTRATE_BUILD_NOTE_TEXT ORCHESTRATE_TORCH_VERSION "\0" ORCHESTRATE_COMPILER_ID
#define ORCHESTRATE_BUILD_NOTE                                                                          \
  __attribute__((section(".note.orchestrate"), used, aligned(4))) static const struct {                \
    std::uint32_t owner_size, desc_size, type;                                                         \
    char owner[12];                                                                                    \
    std::uint32_t api_version, cxx11_abi;                                                              \
    char text[(sizeof(ORCHESTRATE_BUILD_NOTE_TEXT) + 3) / 4 * 4];                                      \
  } orchestrate_build_note {                                                                           \
    12, 8 + sizeof(ORCHESTRATE_BUILD_NOTE_TEXT), 1, "orchestrate", ORCHESTRATE_PLUGIN_API_VERSION,      \
        _GLIBCXX_USE_CXX11_ABI, ORCHESTRATE_BUILD_NOTE_TEXT                                            \
  }

#define ORCHESTRATE_PLUGIN(NAME, VERSION, REGISTER_FN)                                                   \
  ORCHESTRATE_BUILD_NOTE;                                                                              \
  extern "C" ORCHESTRATE_API const ::orchestrate::PluginDescriptor* orchestrate_plugin_descriptor() {  \
    static const ::orchestrate::PluginDescriptor descriptor{                                           \
        ::orchestrate::kPluginMagic, ORCHESTRATE_PLUGIN_API_VERSION, NAME, VERSION,                    \
        ORCHESTRATE_TORCH_VERSION,   ORCHESTRATE_COMPILER_ID,        _GLIBCXX_USE_CXX11_ABI, &REGISTER_FN}; \
    return &descriptor;                                                                                \
  }

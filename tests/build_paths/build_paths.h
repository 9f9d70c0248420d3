// Where this build's files are, for tests that run the host program, load
// plugins or read the source tree. Defined in one generated file
// (CMakeLists.txt here says why not as compile definitions).
#pragma once

namespace orchestrate::build_paths {
extern const char* const kSourceDir;              // the project's source tree
extern const char* const kBuildDir;               // the build tree
extern const char* const kOrchestrateBin;         // the host program, build/bin/orchestrate
extern const char* const kTestPluginDir;          // the built plugins
extern const char* const kBadPluginDir;           // tests/bad_plugins' refused plugins, one directory each
}  // namespace orchestrate::build_paths

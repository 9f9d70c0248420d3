// The front end's hand-over to the engine executable, which links LibTorch.
#pragma once

#include <filesystem>

namespace orchestrate::cli {

// The engine beside the running front end: the path from the front end's
// directory (build and install trees alike) is fixed at build time, and the
// front end's own path comes from /proc/self/exe, never from $PATH.
std::filesystem::path engine_path();

// Replaces this process by the engine, with the same argv (argv[0]
// included), environment and stdio; LibTorch is made findable first (see
// torch_library_lookup.h). Throws Error when the engine is missing or cannot
// be executed.
[[noreturn]] void exec_engine(char** argv);

}  // namespace orchestrate::cli

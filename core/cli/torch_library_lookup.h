// LibTorch for the engine on a machine where it is not where the engine was
// built against: an installed prefix copied to another machine, with the
// same torch wheel installed at another path.
#pragma once

#include <filesystem>

namespace orchestrate::cli {

// The file whose presence marks a directory as LibTorch's library directory
// (in the CPU and the CUDA wheels alike).
inline constexpr const char* kTorchLibraryMarker = "libtorch_cpu.so";

// Before exec'ing `engine`: when no directory the loader would search for it
// ($LD_LIBRARY_PATH, the engine's recorded RUNPATH, the system directories)
// holds LibTorch, prepends to LD_LIBRARY_PATH $ORCHESTRATE_TORCH_LIB, else the
// lib directory of the torch package that `python3` imports. Throws Error
// naming both when neither holds it. Nothing changes when LibTorch is found,
// so the usual case costs a few stat calls.
void make_torch_findable(const std::filesystem::path& engine);

}  // namespace orchestrate::cli

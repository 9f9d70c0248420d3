// The library search path recorded in an executable (DT_RUNPATH, or the older
// DT_RPATH), which the front end checks before handing over to the engine.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace orchestrate::cli {

// The recorded directories in order, "$ORIGIN" left as written; empty when the
// file records none or is not a 64-bit ELF file.
std::vector<std::string> elf_runpath(const std::filesystem::path& file);

}  // namespace orchestrate::cli

// Runs a program (found on PATH when the name has no slash) with its
// stdout and stderr into a log file, without a shell, and waits for it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "orchestrate/api.h"

namespace orchestrate {

// Its exit status; 128 + the signal that ended it; -1 when it could not start.
ORCHESTRATE_API int run_program(const std::string& program, const std::vector<std::string>& arguments,
                                const std::filesystem::path& log);

}  // namespace orchestrate

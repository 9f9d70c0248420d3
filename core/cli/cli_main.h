// What both executables' main() share: no command, --help, --version, an
// unknown command, and errors turned into a one-line message and an exit code.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "command.h"

namespace orchestrate::cli {

// Runs a known command; `arguments` are those after its name.
using CommandRunner = std::function<int(const Command& command, const std::vector<std::string>& arguments)>;

// `arguments`: argv after the program name. Returns the exit code.
int run_cli(const std::vector<std::string>& arguments, const CommandRunner& run);

}  // namespace orchestrate::cli

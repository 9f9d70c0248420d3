// What both executables' main() share: no command, --help, --version, an
// unknown command, and errors turned into a one-line message and an exit code.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/command.h"

namespace orchestrate::cli {

// Runs a known command, or the subcommand its first argument names, with
// the arguments after its name (command_target).
using CommandRunner = std::function<int(const CommandTarget& target)>;

// `arguments`: argv after the program name. Returns the exit code.
int run_cli(const std::vector<std::string>& arguments, const CommandRunner& run);

}  // namespace orchestrate::cli

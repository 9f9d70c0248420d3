#include "cli/cli_main.h"

#include <iostream>

#include "orchestrate/closest_match.h"
#include "orchestrate/error.h"

namespace orchestrate::cli {
namespace {

// -V or --version among the options (before a "--" that ends them), as
// git, cargo and kubectl take it after a command too.
bool asks_for_version(const std::vector<std::string>& arguments) {
  for (const std::string& argument : arguments) {
    if (argument == "--") return false;
    if (argument == "-V" || argument == "--version") return true;
  }
  return false;
}

// " (did you mean 'train'?)" for the command nearest a mistyped one.
std::string did_you_mean(const std::string& typed) {
  std::vector<std::string> names;
  for (const Command& command : commands()) names.emplace_back(command.name);
  const std::string nearest = closest_match(typed, names);
  return nearest.empty() ? "" : " (did you mean '" + nearest + "'?)";
}

const Command& known_command(const std::string& name) {
  const Command* command = find_command(name);
  if (command == nullptr)
    throw UsageError("unknown command '" + name + "'" + did_you_mean(name) + "; see orchestrate --help");
  return *command;
}

}  // namespace

int run_cli(const std::vector<std::string>& arguments, const CommandRunner& run) {
  if (arguments.empty()) {
    print_usage(std::cerr);
    return static_cast<int>(ExitCode::usage);
  }
  const std::string& first = arguments.front();
  try {
    if (asks_for_version(arguments)) {
      print_version(std::cout);
      return 0;
    }
    if (first == "--help" || first == "-h" || (first == "help" && arguments.size() == 1)) {
      print_usage(std::cout);
      return 0;
    }
    // help CMD [SUBCOMMAND]: that one's help, as CMD [SUBCOMMAND] --help.
    const Command& command = known_command(first == "help" ? arguments[1] : first);
    std::vector<std::string> rest(arguments.begin() + (first == "help" ? 2 : 1), arguments.end());
    if (first == "help") rest.emplace_back("--help");
    const std::optional<CommandTarget> target = command_target(command, rest);
    if (!target) {
      print_command_usage(command, std::cout);
      return 0;
    }
    return run(*target);
  } catch (const Error& e) {
    std::cerr << "orchestrate: error: " << error_for_display(e.what()) << "\n";
    return static_cast<int>(e.exit_code());
  } catch (const std::exception& e) {
    std::cerr << "orchestrate: error: " << exception_reason(e) << "\n";
    return static_cast<int>(ExitCode::runtime_failure);
  }
}

}  // namespace orchestrate::cli

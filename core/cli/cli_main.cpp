#include "cli_main.h"

#include <iostream>

#include "orchestrate/error.h"

namespace orchestrate::cli {
int run_cli(const std::vector<std::string>& arguments, const CommandRunner& run) {
  if (arguments.empty()) {
    print_usage(std::cerr);
    return static_cast<int>(ExitCode::usage);
  }
  const std::string& first = arguments.front();
  if (first == "--help" || first == "-h" || first == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (first == "--version") {
    print_version(std::cout);
    return 0;
  }
  try {
    const Command* command = find_command(first);
    if (command == nullptr) throw UsageError("unknown command '" + first + "' (see orchestrate --help)");
    return run(*command, {arguments.begin() + 1, arguments.end()});
  } catch (const Error& e) {
    std::cerr << "orchestrate: error: " << error_for_display(e.what()) << "\n";
    return static_cast<int>(e.exit_code());
  } catch (const std::exception& e) {
    std::cerr << "orchestrate: error: " << exception_reason(e) << "\n";
    return static_cast<int>(ExitCode::runtime_failure);
  }
}

}  // namespace orchestrate::cli

// orchestrate: train image classifiers from TOML recipes with plugin components.
#include <torch/version.h>

#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "heap_reuse.h"
#include "orchestrate/api.h"
#include "orchestrate/error.h"

namespace {

void print_usage(std::ostream& out) {
  out << "usage: orchestrate <command> [options]\n\ncommands:\n";
  for (const auto& command : orchestrate::cli::commands())
    out << "  " << command.name << std::string(12 - std::string(command.name).size(), ' ') << command.summary << "\n";
  out << "\n`orchestrate <command> --help` shows a command's options.\n"
         "exit codes: 0 ok, 1 runtime failure, 2 usage or recipe error, 3 plugin error, 130 interrupted\n";
}

// Keeps a foreign exception (LibTorch's include a backtrace) to its first line.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

int main(int argc, char** argv) {
  orchestrate::cli::keep_freed_memory_for_reuse();
  const std::vector<std::string> arguments(argv + 1, argv + argc);
  if (arguments.empty()) {
    print_usage(std::cerr);
    return static_cast<int>(orchestrate::ExitCode::usage);
  }
  const std::string& first = arguments.front();
  if (first == "--help" || first == "-h" || first == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (first == "--version") {
    std::cout << "orchestrate " << orchestrate::version() << " (LibTorch " << TORCH_VERSION << ", plugin API "
              << orchestrate::kPluginApiVersion << ")\n";
    return 0;
  }
  try {
    for (const auto& command : orchestrate::cli::commands())
      if (first == command.name) return command.run({arguments.begin() + 1, arguments.end()});
    throw orchestrate::UsageError("unknown command '" + first + "' (see orchestrate --help)");
  } catch (const orchestrate::Error& e) {
    std::cerr << "orchestrate: error: " << e.what() << "\n";
    return static_cast<int>(e.exit_code());
  } catch (const std::exception& e) {
    std::cerr << "orchestrate: error: " << first_line(e.what()) << "\n";
    return static_cast<int>(orchestrate::ExitCode::runtime_failure);
  }
}

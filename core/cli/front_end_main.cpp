// orchestrate: train image classifiers from TOML recipes with plugin components.
//
// This executable is the front end. It links neither LibTorch nor the SDK
// library, so it starts in milliseconds: it answers --help, --version and the
// queries over the run store itself, and execs the engine (the same process:
// pid, signals, stdio and exit code stay) for every other command.
#include <string>
#include <vector>

#include "cli_main.h"
#include "command.h"
#include "engine_launch.h"
#include "export_tensorboard_command.h"

namespace {

using orchestrate::cli::CommandFunction;

// The function that runs `name` here, or nullptr when the engine runs it.
CommandFunction front_end_function(const std::string& name, const std::vector<std::string>& arguments) {
  using namespace orchestrate::cli;
  if (name == "runs") return runs_command;
  if (name == "report") return report_command;
  if (name == "show") return show_command;
  if (name == "compare") return compare_command;
  if (name == "plot") return plot_command;
  if (name == "recipes") return recipes_command;
  // `export serving` builds a model: only `export tensorboard` reads the store alone.
  if (name == "export" && !arguments.empty() && arguments.front() == "tensorboard")
    return [](const std::vector<std::string>& rest) {
      return export_tensorboard_command({rest.begin() + 1, rest.end()});
    };
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  return orchestrate::cli::run_cli(
      {argv + 1, argv + argc},
      [argv](const orchestrate::cli::Command& command, const std::vector<std::string>& rest) {
        if (const CommandFunction run = front_end_function(command.name, rest)) return run(rest);
        orchestrate::cli::exec_engine(argv);
      });
}

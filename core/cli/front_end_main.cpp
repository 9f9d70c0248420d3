// orchestrate: train image classifiers from TOML recipes with plugin components.
//
// This executable is the front end. It links neither LibTorch nor the SDK
// library, so it starts in milliseconds: it answers --help, --version and the
// queries over the run store itself, and execs the engine (the same process:
// pid, signals, stdio and exit code stay) for every other command. Which is
// which is the command table's (command.cpp) runs_in, a subcommand's own.
#include <string>
#include <vector>

#include "cli/cli_main.h"
#include "cli/command.h"
#include "cli/engine_launch.h"

int main(int argc, char** argv) {
  using namespace orchestrate::cli;
  return run_cli({argv + 1, argv + argc}, [argv](const CommandTarget& target) {
    if (target.runs_in == Executable::front_end) return target.run(target.arguments);
    exec_engine(argv);
  });
}

// orchestrate-engine: every command, LibTorch and the plugins linked in. The
// front end (`orchestrate`) execs it for the commands it does not run itself;
// see front_end_main.cpp. Both dispatch through the one table in command.cpp.
#include <string>
#include <vector>

#include "cli_main.h"
#include "command.h"
#include "heap_reuse.h"
#include "orchestrate/error.h"

int main(int argc, char** argv) {
  using namespace orchestrate::cli;
  keep_freed_memory_for_reuse();
  return run_cli({argv + 1, argv + argc}, [](const Command& command, const std::vector<std::string>& rest) {
    if (command.run == nullptr)
      throw orchestrate::Error(std::string("'") + command.name + "' is not linked into orchestrate-engine (a build bug)");
    return command.run(rest);
  });
}

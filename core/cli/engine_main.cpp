// orchestrate-engine: every command, LibTorch and the plugins linked in. The
// front end (`orchestrate`) execs it for the commands it does not run itself;
// see front_end_main.cpp. Both dispatch through the one table in command.cpp.
#include <string>
#include <vector>

#include "cli/cli_main.h"
#include "cli/command.h"
#include "cli/heap_reuse.h"
#include "crash_report/crash_handler.h"
#include "crash_report/plugin_call.h"
#include "orchestrate/error.h"

int main(int argc, char** argv) {
  using namespace orchestrate::cli;
  keep_freed_memory_for_reuse();
  // Before any plugin is loaded: a crash in one names it (crash_handler.h).
  orchestrate::install_crash_handler();
  orchestrate::mark_training_thread();
  return run_cli({argv + 1, argv + argc}, [](const CommandTarget& target) {
    if (target.run == nullptr)
      throw orchestrate::Error(std::string("'") + target.name + "' is not linked into orchestrate-engine (a build bug)");
    return target.run(target.arguments);
  });
}

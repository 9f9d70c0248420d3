// orchestrate-engine: every command, LibTorch and the plugins linked in. The
// front end (`orchestrate`) execs it for the commands it does not run itself;
// see front_end_main.cpp.
#include <map>
#include <string>
#include <vector>

#include "cli_main.h"
#include "command.h"
#include "heap_reuse.h"

namespace {

const std::map<std::string, orchestrate::cli::CommandFunction>& engine_commands() {
  using namespace orchestrate::cli;
  static const std::map<std::string, CommandFunction> table{
      {"run", run_command},
      {"rerun", rerun_command},
      {"eval", eval_command},
      {"bench-input", bench_input_command},
      {"plugins", plugins_command},
      {"describe", describe_command},
      {"recipes", recipes_command},
      {"runs", runs_command},
      {"show", show_command},
      {"compare", compare_command},
      {"report", report_command},
      {"plot", plot_command},
      {"checkpoints", checkpoints_command},
      {"weights", weights_command},
      {"export", export_command},
      {"predict", predict_command},
      {"new-plugin", new_plugin_command},
  };
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  orchestrate::cli::keep_freed_memory_for_reuse();
  return orchestrate::cli::run_cli({argv + 1, argv + argc},
                                   [](const orchestrate::cli::Command& command, const std::vector<std::string>& rest) {
                                     return engine_commands().at(command.name)(rest);
                                   });
}

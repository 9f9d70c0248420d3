#include "command_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include "build_paths.h"

namespace orchestrate::testing {

CommandResult run_shell(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

CommandResult run_orchestrate(const std::string& arguments) {
  return run_shell("env -u ORCHESTRATE_PLUGIN_PATH -u ORCHESTRATE_DB " + std::string(orchestrate::build_paths::kOrchestrateBin) + " " +
                   arguments);
}

}  // namespace orchestrate::testing

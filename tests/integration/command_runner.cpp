#include "command_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <random>

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
  return run_shell("env -u ORCHESTRATE_PLUGIN_PATH -u ORCHESTRATE_DB " + std::string(ORCHESTRATE_BIN) + " " +
                   arguments);
}

ScratchDir::ScratchDir() {
  std::random_device random;
  path_ = std::filesystem::temp_directory_path() /
          ("orchestrate_test_" + std::to_string(::getpid()) + "_" + std::to_string(random()));
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ScratchDir::write(const std::string& name, const std::string& text) const {
  const std::string path = file(name);
  std::ofstream(path) << text;
  return path;
}

}  // namespace orchestrate::testing

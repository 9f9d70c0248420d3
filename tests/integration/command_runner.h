// Runs the orchestrate executable the way a user does, for end-to-end tests.
#pragma once

#include <filesystem>
#include <string>

namespace orchestrate::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` through /bin/sh.
CommandResult run_shell(const std::string& command);

// Runs `orchestrate <arguments>` with only the built plugins on its path
// (ORCHESTRATE_PLUGIN_PATH and ORCHESTRATE_DB cleared).
CommandResult run_orchestrate(const std::string& arguments);

// A fresh directory under the system temp dir, removed with the object.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

}  // namespace orchestrate::testing

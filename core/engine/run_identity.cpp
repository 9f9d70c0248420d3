#include "run_identity.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>

namespace orchestrate {

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "";
  return name.data();
}

namespace {
// Runs a git command and returns its first line of output, "" on failure.
// (Shelling out keeps libgit2 out of the dependencies for two queries.)
std::string git_line(const std::string& dir, const std::string& args) {
  const std::string command = "git -C '" + dir + "' " + args + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "";
  std::array<char, 256> buffer{};
  std::string out;
  if (fgets(buffer.data(), buffer.size(), pipe)) out = buffer.data();
  const int status = pclose(pipe);
  if (status != 0) return "";
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}
}  // namespace

std::string git_revision_of(const std::string& path) {
  std::error_code ec;
  auto dir = std::filesystem::absolute(path, ec).parent_path().string();
  if (ec || dir.find('\'') != std::string::npos) return "";
  std::string revision = git_line(dir, "rev-parse HEAD");
  if (revision.empty()) return "";
  if (!git_line(dir, "status --porcelain -- .").empty()) revision += "-dirty";
  return revision;
}

}  // namespace orchestrate

#include "cli/torch_library_lookup.h"

#include <torch/version.h>  // header only, for the advice

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/elf_runpath.h"
#include "orchestrate/error.h"

namespace orchestrate::cli {
namespace {

namespace fs = std::filesystem;

bool holds_torch(const fs::path& dir) {
  std::error_code error;
  return !dir.empty() && fs::exists(dir / kTorchLibraryMarker, error);
}

std::string expand_origin(std::string dir, const fs::path& origin) {
  for (const std::string token : {"${ORIGIN}", "$ORIGIN"})
    for (auto at = dir.find(token); at != std::string::npos; at = dir.find(token))
      dir.replace(at, token.size(), origin.string());
  return dir;
}

std::vector<std::string> split_colons(const char* text) {
  std::vector<std::string> parts;
  std::string part;
  for (const char* c = text; c != nullptr && *c != '\0'; ++c) {
    if (*c == ':') {
      parts.push_back(part);
      part.clear();
    } else {
      part += *c;
    }
  }
  parts.push_back(part);
  return parts;
}

// The directories the loader searches for the engine's libraries:
// LD_LIBRARY_PATH, the engine's RUNPATH, then the system's, with this
// build's multiarch directories (Debian, Ubuntu) and the lib64 ones
// (Fedora, RHEL) rather than one distribution's spelled out.
std::vector<std::string> loader_search_path(const fs::path& engine) {
  std::vector<std::string> dirs = split_colons(std::getenv("LD_LIBRARY_PATH"));
  for (const auto& dir : elf_runpath(engine)) dirs.push_back(expand_origin(dir, engine.parent_path()));
  const std::string multiarch = ORCHESTRATE_LIBRARY_ARCHITECTURE;
  for (const std::string prefix : {"/usr/local/lib", "/usr/lib", "/lib"}) {
    if (!multiarch.empty()) dirs.push_back(prefix + "/" + multiarch);
    dirs.push_back(prefix);
  }
  for (const char* dir : {"/usr/lib64", "/lib64"}) dirs.push_back(dir);
  return dirs;
}

// The lib directory of python3's torch package, or "". find_spec locates the
// package without importing it (importing torch takes seconds).
std::string python_torch_library_dir() {
  FILE* pipe = popen(
      "python3 -c 'import importlib.util, os; s = importlib.util.find_spec(\"torch\"); "
      "print(os.path.join(s.submodule_search_locations[0], \"lib\") if s else \"\")' 2>/dev/null",
      "r");
  if (pipe == nullptr) return "";
  std::string output;
  char buffer[4096];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  pclose(pipe);
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  return output;
}

void prepend_library_path(const std::string& dir) {
  const char* old = std::getenv("LD_LIBRARY_PATH");
  const std::string value = old != nullptr && *old != '\0' ? dir + ":" + old : dir;
  setenv("LD_LIBRARY_PATH", value.c_str(), 1);
}

}  // namespace

void make_torch_findable(const fs::path& engine) {
  for (const auto& dir : loader_search_path(engine))
    if (holds_torch(dir)) return;
  if (const char* chosen = std::getenv("ORCHESTRATE_TORCH_LIB"); chosen != nullptr && *chosen != '\0') {
    if (!holds_torch(chosen))
      throw Error(std::string("ORCHESTRATE_TORCH_LIB=") + chosen + " holds no " + kTorchLibraryMarker +
                  "; set it to LibTorch's lib directory (the torch wheel's site-packages/torch/lib)");
    prepend_library_path(chosen);
    return;
  }
  const std::string from_python = python_torch_library_dir();
  if (holds_torch(from_python)) {
    prepend_library_path(from_python);
    return;
  }
  throw Error("LibTorch not found for " + engine.string() + ": not in the directories it was built against, " +
              "$LD_LIBRARY_PATH or python3's torch package; set ORCHESTRATE_TORCH_LIB to the directory holding " +
              kTorchLibraryMarker + " (pip install torch==" TORCH_VERSION ", then its site-packages/torch/lib)");
}

}  // namespace orchestrate::cli

// `orchestrate new-plugin KIND NAME DIR`: writes a plugin skeleton and says
// how to build and test it. No LibTorch header: it only writes text files.
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/plugin_skeleton.h"
#include "orchestrate/error.h"
#include "orchestrate/shell_word.h"

namespace orchestrate::cli {

namespace {

std::string kinds_text() {
  std::string out;
  for (const auto& kind : plugin_skeleton_kinds()) out += (out.empty() ? "" : ", ") + kind;
  return out;
}

// The prefix this engine runs from (<prefix>/libexec/orchestrate/
// orchestrate-engine; the front end execs it), where an installed SDK's
// CMake package is: what CMAKE_PREFIX_PATH needs.
std::string install_prefix() {
  std::error_code ec;
  const auto executable = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "<orchestrate prefix>";
  auto prefix = (executable.parent_path() / ORCHESTRATE_PREFIX_FROM_ENGINE).lexically_normal();
  if (!prefix.has_filename()) prefix = prefix.parent_path();  // "/usr/local/", normalised from "bin/../.."
  return prefix.string();
}

}  // namespace

int new_plugin_command(const std::vector<std::string>& arguments) {
  po::options_description options("new-plugin options");
  options.add_options()("kind", po::value<std::string>(), ("component kind: " + kinds_text()).c_str())(
      "name", po::value<std::string>(), "the component's snake_case name, also the plugin's")(
      "dir", po::value<std::string>(), "directory to write; created, or empty");
  po::positional_options_description positional;
  positional.add("kind", 1).add("name", 1).add("dir", 1);
  po::variables_map values;
  if (!parse_options("new-plugin", "KIND NAME DIR", options, positional, arguments, values)) return 0;
  if (!values.count("kind") || !values.count("name") || !values.count("dir"))
    throw UsageError("new-plugin: expected KIND NAME DIR, e.g. orchestrate new-plugin hook my_hook my_hook (kinds: " +
                     kinds_text() + ")");
  const auto kind = values["kind"].as<std::string>();
  const auto name = values["name"].as<std::string>();
  const std::filesystem::path dir = values["dir"].as<std::string>();

  const auto written = write_plugin_skeleton(kind, name, dir);
  std::cout << "wrote the " << kind << " plugin \"" << name << "\":\n";
  for (const auto& path : written) std::cout << "  " << path.string() << "\n";
  const auto source = shell_word(dir.string());
  const auto build = shell_word((dir / "build").string());
  // The SDK's CMake package is in an install tree only. Run from a build
  // tree (its CMakeCache.txt beside bin/), the SDK is installed from it
  // first, into the build tree's sdk/ (the commands had named the build
  // tree itself, where CMake finds no package).
  std::string prefix = install_prefix();
  std::error_code ec;
  if (std::filesystem::is_regular_file(std::filesystem::path(prefix) / "CMakeCache.txt", ec)) {
    const std::string build_tree = prefix;
    prefix = (std::filesystem::path(build_tree) / "sdk").string();
    std::cout << "this orchestrate runs from its build tree; install its SDK once (the CMake package is in an "
                 "install tree only):\n"
              << "  cmake --install " << shell_word(build_tree) << " --prefix " << shell_word(prefix) << "\n";
  }
  // The SDK's package finds the LibTorch it was built with, so the prefix
  // alone is the search path, from any shell.
  std::cout << "build it against this orchestrate and run its tests (smoke.toml, a few training steps; orchestrate conformance):\n"
            << "  cmake -S " << source << " -B " << build << " -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="
            << shell_word(prefix) << "\n"
            << "  cmake --build " << build << " --parallel && ctest --test-dir " << build << " --output-on-failure\n";
  return 0;
}

}  // namespace orchestrate::cli

// orchestrate-conformance: the per-kind contracts, run against the plugins on
// the plugin path. `orchestrate conformance ...` execs it with its arguments;
// a plugin project's ctest can call either.
//
//   orchestrate-conformance [KIND NAME] [--settings FILE.toml]... [--plugin-path DIRS] [--gtest_...]
//
// Exit status: 0 when every check passed, 1 when one failed, 2 for a bad
// command line or settings file, as the CLI's other commands.
#include <gtest/gtest.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "conformance/conformance_plugins.h"
#include "orchestrate/closest_match.h"
#include "orchestrate/error.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kUsage =
    "usage: orchestrate conformance [KIND NAME] [--settings FILE.toml]... [--plugin-path DIRS] [--gtest_filter=...]\n"
    "Checks components against their kind's contract: every component on the plugin path, or the one named.\n";

// The selection, and what is left for GoogleTest (its --gtest_* flags).
orchestrate::conformance::Selection parse(int argc, char** argv, std::vector<std::string>& for_gtest) {
  po::options_description options("options");
  options.add_options()("help,h", "this text")(
      "settings", po::value<std::vector<std::string>>()->composing(),
      "TOML file of the component's keys over its defaults (a data set's paths); top-level keys are for KIND NAME, "
      "[KIND.NAME] tables for any component")(
      "plugin-path", po::value<std::string>()->default_value(""),
      "':'-separated plugin directories, searched before $ORCHESTRATE_PLUGIN_PATH and the default; without KIND "
      "NAME, only their plugins are checked")(
      "kind", po::value<std::string>(), "")("name", po::value<std::string>(), "");
  po::positional_options_description positional;
  positional.add("kind", 1).add("name", 1);
  po::variables_map values;
  try {
    const auto parsed = po::command_line_parser(argc, argv).options(options).positional(positional).allow_unregistered().run();
    po::store(parsed, values);
    for (const auto& unknown : po::collect_unrecognized(parsed.options, po::exclude_positional)) {
      if (unknown.rfind("--gtest_", 0) != 0) throw orchestrate::UsageError("conformance: unknown option '" + unknown + "'");
      for_gtest.push_back(unknown);
    }
  } catch (const po::error& e) {
    throw orchestrate::UsageError(std::string("conformance: ") + e.what());
  }
  if (values.count("help")) {
    std::cout << kUsage << options;
    std::exit(0);
  }
  orchestrate::conformance::Selection selection;
  selection.plugin_path = values["plugin-path"].as<std::string>();
  if (values.count("settings")) selection.settings_files = values["settings"].as<std::vector<std::string>>();
  if (values.count("kind")) {
    const std::string kind = values["kind"].as<std::string>();
    selection.kind = orchestrate::conformance::kind_named(kind);
    if (!selection.kind) {
      const std::string nearest = orchestrate::closest_match(kind, orchestrate::conformance::kind_list());
      throw orchestrate::UsageError("conformance: unknown kind '" + kind + "'" +
                                    (nearest.empty() ? "" : "; did you mean '" + nearest + "'?") + " (known: " +
                                    orchestrate::conformance::kind_names() + ")");
    }
    if (!values.count("name")) throw orchestrate::UsageError("conformance: KIND needs a NAME (orchestrate plugins lists them)");
    selection.name = values["name"].as<std::string>();
  }
  return selection;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> gtest_arguments{argv[0]};
  try {
    orchestrate::conformance::configure(parse(argc, argv, gtest_arguments));
  } catch (const orchestrate::Error& e) {
    std::cerr << "orchestrate: error: " << orchestrate::error_for_display(e.what()) << "\n";
    return static_cast<int>(e.exit_code());
  } catch (const std::exception& e) {
    std::cerr << "orchestrate: error: " << e.what() << "\n";
    return static_cast<int>(orchestrate::ExitCode::runtime_failure);
  }
  std::vector<char*> gtest_argv;
  for (auto& argument : gtest_arguments) gtest_argv.push_back(argument.data());
  int gtest_argc = static_cast<int>(gtest_argv.size());
  testing::InitGoogleTest(&gtest_argc, gtest_argv.data());
  return RUN_ALL_TESTS() == 0 ? 0 : 1;
}

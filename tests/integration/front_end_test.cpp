// The split CLI: the front end `orchestrate` starts without LibTorch, runs the
// queries itself and execs the engine for every other command.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "build_paths.h"
#include "command_runner.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

TEST(FrontEnd, LinksNeitherLibTorchNorTheSdkLibrary) {
  const auto needed = run_shell("readelf -d " + std::string(orchestrate::build_paths::kOrchestrateBin) + " | grep NEEDED");
  ASSERT_EQ(needed.exit_code, 0) << needed.output;
  EXPECT_NE(needed.output.find("liborchestrate_base.so"), std::string::npos) << needed.output;
  for (const char* library : {"torch", "c10", "liborchestrate_sdk", "cuda"})
    EXPECT_EQ(needed.output.find(library), std::string::npos) << library << " in\n" << needed.output;
  // Nor through another library: ldd lists everything the loader maps.
  const auto mapped = run_shell("ldd " + std::string(orchestrate::build_paths::kOrchestrateBin));
  ASSERT_EQ(mapped.exit_code, 0) << mapped.output;
  EXPECT_EQ(mapped.output.find("torch"), std::string::npos) << mapped.output;
}

TEST(FrontEnd, HelpListsTheEngineCommandsToo) {
  const auto help = run_orchestrate("--help");
  ASSERT_EQ(help.exit_code, 0);
  for (const char* command : {"run", "rerun", "eval", "bench-input", "plugins", "describe", "runs", "show", "compare", "report",
                              "plot", "checkpoints", "weights", "export", "predict"})
    EXPECT_NE(help.output.find("\n  " + std::string(command) + " "), std::string::npos) << command << help.output;
}

TEST(FrontEnd, EngineRunsInTheSameProcess) {
  ScratchDir dir;
  const auto recipe = dir.write("long.toml", R"(schema_version = 1
[run]
max_steps = 100000
batch_size = 8
[data]
plugin = "mock"
[model]
plugin = "lenet"
[optimizer]
plugin = "sgd"
)");
  // exec, not fork: the pid the shell started is the engine's, and SIGINT
  // sent to it stops the run as it always did (exit code 130).
  const auto result = run_shell("env -u ORCHESTRATE_PLUGIN_PATH " + std::string(orchestrate::build_paths::kOrchestrateBin) + " run " + recipe +
                                " --db " + dir.file("runs.db") +
                                " --quiet & pid=$!; sleep 4; readlink /proc/$pid/exe; kill -INT $pid; wait $pid; "
                                "echo \"exit=$?\"");
  EXPECT_NE(result.output.find("/libexec/orchestrate/orchestrate-engine\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("exit=130"), std::string::npos) << result.output;
}

TEST(FrontEnd, MissingEngineIsOneLineNamingItsPath) {
  ScratchDir dir;
  fs::create_directories(dir.path() / "bin");
  const fs::path front_end = dir.path() / "bin" / "orchestrate";
  fs::copy_file(orchestrate::build_paths::kOrchestrateBin, front_end);
  const auto result = run_shell(front_end.string() + " plugins");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.output, "orchestrate: error: the engine executable " +
                               (dir.path() / "libexec" / "orchestrate" / "orchestrate-engine").string() +
                               " is missing or not executable (No such file or directory); every command but the "
                               "queries runs in it: rebuild (cmake --build BUILD) or reinstall (cmake --install "
                               "BUILD --prefix PREFIX)\n");
  // The queries need no engine.
  const auto query = run_shell(front_end.string() + " runs --db " + dir.file("none.db"));
  EXPECT_EQ(query.exit_code, 2) << query.output;
  EXPECT_NE(query.output.find("no run store here"), std::string::npos) << query.output;
}

}  // namespace
}  // namespace orchestrate::testing

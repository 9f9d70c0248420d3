// Hostile recipes, overrides and stored recipes through the real CLI: each
// gets one located line and the documented exit code, never a signal, a
// hang or a stack trace, and never a run row.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "command_runner.h"
#include "orchestrate/input_limits.h"

namespace orchestrate::testing {
namespace {

const std::string kRecipe = R"(schema_version = 1
[run]
name = "hostile"
batch_size = 32
max_steps = 4
log_every = 2
threads = 1
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 256
test_size = 64
[model]
plugin = "lenet"
[optimizer]
plugin = "adam"
lr = 0.003
)";

std::size_t line_count(const std::string& text) {
  std::size_t lines = 0;
  for (const char c : text) lines += c == '\n';
  return lines;
}

std::string repeated(const std::string& piece, int times, const std::string& separator) {
  std::string out;
  for (int i = 0; i < times; ++i) out += (i ? separator : "") + piece;
  return out;
}

// The exit code and one line naming the place, and no run store touched.
void expect_refused(const ScratchDir& dir, const CommandResult& result, int exit_code, const std::string& part) {
  EXPECT_EQ(result.exit_code, exit_code) << result.output;
  EXPECT_EQ(line_count(result.output), 1u) << result.output.substr(0, 2000);
  EXPECT_NE(result.output.find(part), std::string::npos) << result.output.substr(0, 2000);
  EXPECT_FALSE(std::filesystem::exists(dir.file("runs.db"))) << "a recipe error must not touch the run store";
}

// toml++ builds, and tears down recursively, a table per dotted segment:
// 100,000 of them overflowed the stack (SIGSEGV) before the nesting check.
TEST(HostileRecipe, DeepDottedKeysAndTablesAreOneLineNotACrash) {
  ScratchDir dir;
  const std::string depth = std::to_string(limits::kMaxNesting);
  const auto dotted = dir.write("dotted.toml", kRecipe + repeated("k", 100000, ".") + " = 1\n");
  expect_refused(dir, run_orchestrate("run " + dotted + " --db " + dir.file("runs.db")), 2,
                 dotted + ":20:");
  const auto headers = dir.write("headers.toml", kRecipe + "[" + repeated("t", 100000, ".") + "]\nx = 1\n");
  expect_refused(dir, run_orchestrate("run " + headers + " --db " + dir.file("runs.db")), 2,
                 "nested deeper than " + depth + " levels");
  expect_refused(dir, run_orchestrate("run " + dotted + " --dry-run --set run." + repeated("k", 5000, ".") + "=1"), 2,
                 "more than the " + depth + " levels a recipe may nest");
}

// Inputs on which Debian's toml++ 3.3 asserted (undefined behaviour in a
// release build), found by the recipe fuzz target.
TEST(HostileRecipe, MalformedTomlThatTrippedTheParserIsASyntaxError) {
  ScratchDir dir;
  for (const std::string& tail : {std::string("[\neval]\n"), std::string("x = [}\n"), std::string("[\0\0r]\n", 6),
                                  std::string("\xef\xbb\x9f = 1\n")}) {
    const auto recipe = dir.write("bad.toml", kRecipe + tail);
    const auto result = run_orchestrate("run " + recipe + " --db " + dir.file("runs.db"));
    expect_refused(dir, result, 2, recipe + ":20:");
  }
}

// One mistake repeated 200,000 times is shown 20 times and counted.
TEST(HostileRecipe, ThousandsOfErrorsPrintTheFirstTwentyAndACount) {
  ScratchDir dir;
  std::string keys;
  for (int i = 0; i < 200000; ++i) keys += "unknown_" + std::to_string(i) + " = 1\n";
  std::string text = kRecipe;
  text.insert(text.find("[data]"), keys);
  const auto recipe = dir.write("many.toml", text);
  const auto result = run_orchestrate("run " + recipe + " --db " + dir.file("runs.db"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(line_count(result.output), limits::kMaxErrorLines + 1) << result.output.substr(0, 3000);
  EXPECT_NE(result.output.find("unknown key 'unknown_0'"), std::string::npos) << result.output.substr(0, 500);
  EXPECT_NE(result.output.find("\n... and 199980 more (the first 20 are shown)\n"), std::string::npos)
      << result.output.substr(result.output.size() > 300 ? result.output.size() - 300 : 0);
  EXPECT_FALSE(std::filesystem::exists(dir.file("runs.db")));
}

// A thousand intra-op threads hung LibTorch's pool under a memory limit; more
// threads than cores is refused before the run starts.
TEST(HostileRecipe, MoreThreadsThanCoresIsRefusedBeforeTheRun) {
  ScratchDir dir;
  const auto recipe = dir.write("r.toml", kRecipe);
  expect_refused(dir, run_orchestrate("run " + recipe + " --set run.threads=1000 --db " + dir.file("runs.db")), 2,
                 recipe + ":2:1: [run] threads = 1000 is more than the ");
}

// A bad value inside a table an override writes is blamed on that --set
// (it was blamed on line 1 of the recipe file: the value's own parse).
TEST(HostileRecipe, ABadValueInsideAnOverrideNamesThatOverride) {
  ScratchDir dir;
  const auto recipe = dir.write("r.toml", kRecipe);
  const std::string bad = "optimizer.wrappers=[{plugin=\"batch_gradients\", num_batches=0}]";
  const auto result = run_orchestrate("run " + recipe + " --dry-run --set optimizer.lr=0.01 --set '" + bad + "'");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_EQ(line_count(result.output), 1u) << result.output;
  EXPECT_EQ(result.output.rfind("orchestrate: error: --set " + bad + ": ", 0), 0u) << result.output;
  EXPECT_NE(result.output.find("num_batches"), std::string::npos) << result.output;
}

// A stored recipe edited in the run store (or written by a damaged store) is
// read back by `compare` and `rerun`: deep nesting crashed both.
TEST(HostileRecipe, ATamperedStoredRecipeIsRefusedByRerunAndSkippedByCompare) {
  ScratchDir dir;
  const auto recipe = dir.write("r.toml", kRecipe);
  const std::string db = " --db " + dir.file("store.db");
  ASSERT_EQ(run_orchestrate("run " + recipe + " --quiet" + db).exit_code, 0);
  ASSERT_EQ(run_orchestrate("run " + recipe + " --quiet --set optimizer.lr=0.001" + db).exit_code, 0);
  const std::string deep = "schema_version = 1\n" + repeated("k", 20000, ".") + " = 1\n";
  dir.write("tamper.sql", "UPDATE runs SET resolved_recipe = '" + deep + "' WHERE id = 1;\n");
  ASSERT_EQ(run_shell("sqlite3 " + dir.file("store.db") + " < " + dir.file("tamper.sql")).exit_code, 0);
  const auto compared = run_orchestrate("compare 1 2" + db);
  EXPECT_EQ(compared.exit_code, 0) << compared.output.substr(0, 2000);
  EXPECT_NE(compared.output.find("optimizer.lr"), std::string::npos) << compared.output.substr(0, 2000);
  const auto rerun = run_orchestrate("rerun 1 --dry-run" + db);
  EXPECT_EQ(rerun.exit_code, 2) << rerun.output.substr(0, 2000);
  EXPECT_EQ(line_count(rerun.output), 1u) << rerun.output.substr(0, 2000);
  EXPECT_NE(rerun.output.find("nested deeper than"), std::string::npos) << rerun.output.substr(0, 2000);
}

}  // namespace
}  // namespace orchestrate::testing

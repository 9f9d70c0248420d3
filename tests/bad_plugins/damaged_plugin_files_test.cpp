// Damaged copies of a real plugin in a plugin directory, end to end: each is
// refused before dlopen (no signal, exit 3, one line naming the file),
// `plugins` still lists the good ones, a command that does not need it runs
// with a one-line warning, and one that does names the refused file.
#include <link.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "build_paths.h"
#include "command_runner.h"
#include "orchestrate/api.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;
using Bytes = std::string;

// An lr_schedule plugin: no other command below needs it.
const std::string kVictim = "liborchestrate_piecewise.so";

Bytes real_plugin() { return file_bytes(std::string(orchestrate::build_paths::kTestPluginDir) + "/" + kVictim); }

Bytes truncated(const Bytes& real) { return real.substr(0, real.size() / 2); }

Bytes random_bytes(const Bytes& real) {
  std::mt19937 random(22);
  Bytes noise(real.size(), '\0');
  for (auto& byte : noise) byte = static_cast<char>(random());
  return noise;
}

// The high bytes of every program header's file offset flipped: the
// segments then lie far past the end of the file.
Bytes flipped_program_headers(const Bytes& real) {
  Bytes flipped = real;
  ElfW(Ehdr) header;
  std::memcpy(&header, flipped.data(), sizeof header);
  for (int i = 0; i < header.e_phnum; ++i) {
    const std::size_t offset_field = header.e_phoff + i * sizeof(ElfW(Phdr)) + offsetof(ElfW(Phdr), p_offset);
    flipped[offset_field + 5] = static_cast<char>(flipped[offset_field + 5] ^ 0xff);
  }
  return flipped;
}

std::vector<std::string> lines_naming(const std::string& output, const std::string& text) {
  std::vector<std::string> out;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (line.find(text) != std::string::npos) out.push_back(line);
  return out;
}

std::size_t line_count(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

struct Damage {
  const char* name;
  Bytes (*make)(const Bytes&);
  const char* reason;  // how the refusal begins, after "cannot be loaded safely: "
};

const Damage kDamages[] = {
    {"truncated", truncated, "truncated or damaged: segment "},
    {"random_bytes", random_bytes, "not an ELF file (no valid ELF identification bytes)"},
    // Segment 0 is the LOAD segment with GNU ld, the PHDR segment with lld.
    {"flipped_program_headers", flipped_program_headers, "truncated or damaged: segment 0 ("},
};

class DamagedPluginFile : public ::testing::TestWithParam<Damage> {
 protected:
  void SetUp() override {
    const Bytes real = real_plugin();
    ASSERT_GT(real.size(), 1000u) << "build the plugins first";
    std::ofstream(path, std::ios::binary) << GetParam().make(real);
  }
  ScratchDir dir;
  const std::string path = dir.file(kVictim);
  const std::string refusal = path + ": cannot be loaded safely: " + GetParam().reason;
};

TEST_P(DamagedPluginFile, PluginsListsTheGoodOnesAndRefusesItInOneLine) {
  auto result = run_orchestrate("plugins --format csv --plugin-path " + dir.path().string());
  EXPECT_EQ(result.exit_code, 3) << result.output;  // an exit, not a signal (128 + n)
  const auto named = lines_naming(result.output, path);
  ASSERT_EQ(named.size(), 1u) << result.output;
  EXPECT_EQ(named[0].rfind("orchestrate: error: plugin refused: " + refusal, 0), 0u) << named[0];
  EXPECT_NE(named[0].find("; rebuild the plugin or remove it from the plugin path"), std::string::npos) << named[0];
  for (const char* row : {"optimizer,adam,adam,", "model,lenet,lenet,", "dataset,mock,mock,"})
    EXPECT_NE(result.output.find(row), std::string::npos) << row << "\n" << result.output;
  // The refused file keeps its name: the default directory's copy does not stand in for it.
  EXPECT_EQ(result.output.find("lr_schedule,piecewise,"), std::string::npos) << result.output;
}

TEST_P(DamagedPluginFile, ACommandThatDoesNotNeedItRunsWithAWarning) {
  auto result = run_orchestrate("describe optimizer adam --format csv --plugin-path " + dir.path().string());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  const auto named = lines_naming(result.output, path);
  ASSERT_EQ(named.size(), 1u) << result.output;
  EXPECT_EQ(named[0].rfind("orchestrate: warning: plugin skipped: " + refusal, 0), 0u) << named[0];
  EXPECT_NE(result.output.find("\nlr,float,0.01,"), std::string::npos) << result.output;
}

TEST_P(DamagedPluginFile, ACommandThatNeedsItNamesTheRefusedFile) {
  auto result = run_orchestrate("describe lr_schedule piecewise --plugin-path " + dir.path().string());
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_EQ(line_count(result.output), 2u) << result.output;  // the warning, then the error
  const std::string error = "orchestrate: error: unknown lr_schedule 'piecewise'";
  const auto errors = lines_naming(result.output, error);
  ASSERT_EQ(errors.size(), 1u) << result.output;
  EXPECT_EQ(errors[0].rfind(error, 0), 0u) << errors[0];
  EXPECT_NE(errors[0].find("; it may be in a plugin file that could not be loaded: " + refusal), std::string::npos)
      << errors[0];
}

INSTANTIATE_TEST_SUITE_P(Copies, DamagedPluginFile, ::testing::ValuesIn(kDamages),
                         [](const auto& info) { return std::string(info.param.name); });

// `text` as a std::regex that matches it literally.
std::string escaped(const std::string& text) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(text, special, R"(\$&)");
}

std::string api() { return std::to_string(kPluginApiVersion); }

// Exactly one line of `output` names `path`, and it matches `pattern` whole.
bool only_line_matches(const std::string& output, const std::string& path, const std::string& pattern) {
  const auto lines = lines_naming(output, path);
  return lines.size() == 1 && std::regex_match(lines[0], std::regex(pattern));
}

TEST(BadPlugins, ARunThatDoesNotNeedARefusedPluginGoesOn) {
  ScratchDir dir;
  std::ofstream(dir.file(kVictim), std::ios::binary) << truncated(real_plugin());
  const std::string recipe = dir.write("mock.toml", R"(schema_version = 1
[run]
name = "mock"
batch_size = 8
max_steps = 2
[data]
plugin = "mock"
train_size = 64
test_size = 16
[model]
plugin = "lenet"
[optimizer]
plugin = "adam"
)");
  auto result = run_orchestrate("run " + recipe + " --dry-run --plugin-path " + dir.path().string());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(lines_naming(result.output, "orchestrate: warning: plugin skipped: " + dir.file(kVictim)).size(), 1u)
      << result.output;
  EXPECT_NE(result.output.find("[optimizer]\nplugin = \"adam\"\n"), std::string::npos) << result.output;
}

TEST(BadPlugins, ARecipeThatNeedsARefusedPluginNamesItsFile) {
  ScratchDir dir;
  const std::string path = dir.file(kVictim);
  std::ofstream(path, std::ios::binary) << truncated(real_plugin());
  const std::string recipe = dir.write("mock.toml", R"(schema_version = 1
[run]
name = "mock"
[data]
plugin = "mock"
[model]
plugin = "lenet"
[optimizer]
plugin = "adam"
[schedule]
plugin = "piecewise"
)");
  auto result = run_orchestrate("run " + recipe + " --dry-run --plugin-path " + dir.path().string());
  EXPECT_EQ(result.exit_code, 3) << result.output;
  const auto errors = lines_naming(result.output, "orchestrate: error: ");
  ASSERT_EQ(errors.size(), 1u) << result.output;
  EXPECT_EQ(errors[0].rfind("orchestrate: error: " + recipe + ":11:10: [schedule] plugin: unknown lr_schedule 'piecewise'", 0), 0u)
      << errors[0];
  EXPECT_NE(errors[0].find("; it may be in a plugin file that could not be loaded: " + path +
                           ": cannot be loaded safely: truncated or damaged: "),
            std::string::npos)
      << errors[0];
}

TEST(BadPlugins, AnotherApiVersionIsRefusedButTheOthersLoad) {
  const std::string path = std::string(orchestrate::build_paths::kBadPluginDir) + "/future_api/liborchestrate_future_api.so";
  // Both builds are named whole; LibTorch's version and the compiler are
  // the same on both sides (backreferences 1 and 2), whatever they are here.
  const std::string refusal = escaped(path) + ": plugin API version 999, but this orchestrate needs " + api() +
                              "; rebuild the plugin against orchestrate " + escaped(version()) +
                              " \\(the plugin: plugin API 999, LibTorch ([^,]+), _GLIBCXX_USE_CXX11_ABI=1, ([^;]+); "
                              "this orchestrate: plugin API " + api() + ", LibTorch \\1, _GLIBCXX_USE_CXX11_ABI=1, \\2\\)";
  auto listing = run_orchestrate(std::string("plugins --format csv --plugin-path ") + orchestrate::build_paths::kBadPluginDir +
                                 "/future_api");
  EXPECT_EQ(listing.exit_code, 3) << listing.output;
  EXPECT_TRUE(only_line_matches(listing.output, path, "orchestrate: error: plugin refused: " + refusal)) << listing.output;
  EXPECT_NE(listing.output.find("optimizer,adam,adam,"), std::string::npos) << listing.output;

  auto describe = run_orchestrate(std::string("describe optimizer adam --plugin-path ") + orchestrate::build_paths::kBadPluginDir +
                                  "/future_api");
  EXPECT_EQ(describe.exit_code, 0) << describe.output;
  EXPECT_TRUE(only_line_matches(describe.output, path, "orchestrate: warning: plugin skipped: " + refusal))
      << describe.output;
}

// One rule for a broken or a duplicated component: the file is refused, a
// command that uses its name stops naming both files, every other command
// goes on with one warning.
TEST(BadPlugins, AComponentRegisteredTwiceStopsOnlyTheCommandsThatUseIt) {
  const std::string plugin_dir = std::string(orchestrate::build_paths::kBadPluginDir) + "/duplicate";
  const std::string duplicate = fs::path(plugin_dir + "/liborchestrate_duplicate.so").lexically_normal().string();
  const std::string mock =
      fs::path(std::string(orchestrate::build_paths::kTestPluginDir) + "/liborchestrate_mock.so").lexically_normal().string();
  // --plugin-path comes before the default directory, so the duplicate registers first.
  const std::string clash = "dataset 'mock' is registered twice: by plugin 'duplicate' (" + duplicate +
                            ") and by plugin 'mock' (" + mock + ")";
  const std::string refusal = mock + ": " + clash + "; this file is not loaded, and a command that uses dataset "
                              "'mock' stops; remove one of them from the plugin path";
  auto listing = run_orchestrate("plugins --format csv --plugin-path " + plugin_dir);
  EXPECT_EQ(listing.exit_code, 3) << listing.output;
  EXPECT_EQ(lines_naming(listing.output, "registered twice"),
            std::vector<std::string>{"orchestrate: error: plugin refused: " + refusal})
      << listing.output;

  ScratchDir dir;
  const std::string recipe = dir.write(
      "mock.toml", "schema_version = 1\n[data]\nplugin = \"mock\"\n[model]\nplugin = \"lenet\"\n[optimizer]\nplugin = \"sgd\"\n");
  auto uses_it = run_orchestrate("run " + recipe + " --dry-run --plugin-path " + plugin_dir);
  EXPECT_EQ(uses_it.exit_code, 3) << uses_it.output;
  EXPECT_NE(uses_it.output.find(recipe + ":3:10: [data] plugin: " + clash + "; remove one of them from the plugin path (" +
                                mock + " is not loaded)"),
            std::string::npos)
      << uses_it.output;
  EXPECT_EQ(run_orchestrate("describe dataset mock --plugin-path " + plugin_dir).exit_code, 3);
  auto does_not = run_orchestrate("describe optimizer sgd --plugin-path " + plugin_dir);
  EXPECT_EQ(does_not.exit_code, 0) << does_not.output;
  EXPECT_EQ(lines_naming(does_not.output, "registered twice"),
            std::vector<std::string>{"orchestrate: warning: plugin skipped: " + refusal})
      << does_not.output;
}

// A default outside its own range would reach the component (every_n = 0: a
// division by zero, exit 136); the plugin is refused at load, in one line
// naming the plugin, the key and the rule, and the others load.
TEST(BadPlugins, ADefaultOutsideItsOwnRangeRefusesThePluginAtLoad) {
  const std::string path = std::string(orchestrate::build_paths::kBadPluginDir) + "/bad_default/liborchestrate_bad_default.so";
  auto listing = run_orchestrate(std::string("plugins --format csv --plugin-path ") + orchestrate::build_paths::kBadPluginDir +
                                 "/bad_default");
  EXPECT_EQ(listing.exit_code, 3) << listing.output;
  EXPECT_EQ(lines_naming(listing.output, path),
            std::vector<std::string>{"orchestrate: error: plugin refused: " + path +
                                     ": plugin 'bad_default' registers hook 'tick' key 'every_n' with the default 0, "
                                     "which breaks its own rule (must be >= 1); fix the default or the rule"});
  EXPECT_NE(listing.output.find("optimizer,adam,adam,"), std::string::npos) << listing.output;
  EXPECT_EQ(listing.output.find("hook,tick,"), std::string::npos) << listing.output;
}

// The host reads an optimizer's base lr from the key with the learning_rate
// role; an optimizer without one is refused at load, saying what to add.
TEST(BadPlugins, AnOptimizerWithoutALearningRateRoleIsRefusedAtLoad) {
  const std::string path =
      std::string(orchestrate::build_paths::kBadPluginDir) + "/no_learning_rate/liborchestrate_no_learning_rate.so";
  auto listing = run_orchestrate(std::string("plugins --format csv --plugin-path ") + orchestrate::build_paths::kBadPluginDir +
                                 "/no_learning_rate");
  EXPECT_EQ(listing.exit_code, 3) << listing.output;
  EXPECT_EQ(lines_naming(listing.output, path),
            std::vector<std::string>{"orchestrate: error: plugin refused: " + path +
                                     ": plugin 'no_learning_rate' registers optimizer 'roleless_sgd' with no key of "
                                     "role learning_rate (the base lr the schedule scales); add "
                                     ".with_role(ParamRole::learning_rate) to its real lr key"});
}

// A user's copy of a built-in, earlier in the plugin path, is used and the
// built-in file it hides is named: `plugins` notes it, a command warns.
TEST(BadPlugins, ALibraryThatHidesABuiltInIsNamed) {
  ScratchDir dir;
  const std::string builtin =
      (fs::path(orchestrate::build_paths::kTestPluginDir) / "liborchestrate_mock.so").lexically_normal().string();
  const std::string copy = dir.file("liborchestrate_mock.so");
  fs::copy_file(builtin, copy);
  const std::string note = builtin + " is not loaded: " +
                           fs::path(copy).lexically_normal().string() +
                           " has the same plugin name and comes first in the plugin path (directories in order, files by "
                           "name); rename one of them if both "
                           "are wanted";
  auto listing = run_orchestrate("plugins --format csv --plugin-path " + dir.path().string());
  EXPECT_EQ(listing.exit_code, 0) << listing.output;
  EXPECT_EQ(lines_naming(listing.output, builtin), std::vector<std::string>{"orchestrate: note: " + note});
  EXPECT_NE(listing.output.find("dataset,mock,mock,1"), std::string::npos) << listing.output;
  auto describe = run_orchestrate("describe dataset mock --plugin-path " + dir.path().string());
  EXPECT_EQ(describe.exit_code, 0) << describe.output;
  EXPECT_EQ(lines_naming(describe.output, builtin), std::vector<std::string>{"orchestrate: warning: " + note});

  // A run says which file it did not use, among its events.
  const std::string recipe = dir.write("mock.toml", R"(schema_version = 1
[run]
batch_size = 8
max_steps = 1
[data]
plugin = "mock"
train_size = 16
test_size = 8
[model]
plugin = "lenet"
[optimizer]
plugin = "sgd"
)");
  const std::string db = dir.file("runs.db");
  auto run = run_orchestrate("run " + recipe + " --quiet --db " + db + " --plugin-path " + dir.path().string());
  EXPECT_EQ(run.exit_code, 0) << run.output;
  auto shown = run_orchestrate("show 1 --db " + db);
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  const auto events = lines_naming(shown.output, builtin);
  ASSERT_EQ(events.size(), 1u) << shown.output;
  EXPECT_NE(events[0].find(" plugins "), std::string::npos) << events[0];
  EXPECT_NE(events[0].find(note), std::string::npos) << events[0];
}

// A plugin built with the old C++ ABI would fail in the loader ("undefined
// symbol: _ZN11orchestrate9int_paramESs...", nothing about why); its ELF note
// is read before dlopen and both builds are named.
TEST(BadPlugins, ThePreCxx11AbiIsNamedBeforeTheLoaderTriesIt) {
  const std::string path = std::string(orchestrate::build_paths::kBadPluginDir) + "/old_abi/liborchestrate_old_abi.so";
  auto listing = run_orchestrate(std::string("plugins --format csv --plugin-path ") + orchestrate::build_paths::kBadPluginDir +
                                 "/old_abi");
  EXPECT_EQ(listing.exit_code, 3) << listing.output;
  EXPECT_TRUE(only_line_matches(
      listing.output, path,
      "orchestrate: error: plugin refused: " + escaped(path) +
          ": built with _GLIBCXX_USE_CXX11_ABI=0, but this orchestrate uses _GLIBCXX_USE_CXX11_ABI=1; rebuild the "
          "plugin against orchestrate " + escaped(version()) + " \\(the plugin: plugin API " + api() +
          ", LibTorch ([^,]+), _GLIBCXX_USE_CXX11_ABI=0, ([^;]+); this orchestrate: plugin API " + api() +
          ", LibTorch \\1, _GLIBCXX_USE_CXX11_ABI=1, \\2\\)"))
      << listing.output;
  EXPECT_EQ(listing.output.find("undefined symbol"), std::string::npos) << listing.output;
  EXPECT_NE(listing.output.find("optimizer,adam,adam,"), std::string::npos) << listing.output;
}

// A plugin-path entry that is no directory is named, not skipped in silence.
TEST(BadPlugins, AMissingPluginPathEntryIsAnErrorNamingIt) {
  auto result = run_orchestrate("plugins --plugin-path /nonexistent/plugins");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_EQ(result.output, "orchestrate: error: --plugin-path entry '/nonexistent/plugins' is not a directory (it does "
                           "not exist); give the directory that holds the liborchestrate_*.so plugin files\n");
}

}  // namespace
}  // namespace orchestrate::testing

#include "cli/plugin_skeleton.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "orchestrate/error.h"
#include "orchestrate/registry.h"
#include "orchestrate/testing/scratch_dir.h"

namespace {

using orchestrate::cli::plugin_skeleton;
using orchestrate::cli::plugin_skeleton_kinds;
using orchestrate::cli::write_plugin_skeleton;
using orchestrate::testing::ScratchDir;
using orchestrate::testing::file_bytes;

// The message and exit code of the UsageError `call` throws ("" if none).
template <class Call>
std::string usage_error_of(Call call) {
  try {
    call();
  } catch (const orchestrate::UsageError& e) {
    EXPECT_EQ(e.exit_code(), orchestrate::ExitCode::usage);
    return e.what();
  }
  return "";
}

std::vector<std::string> paths_of(const std::vector<orchestrate::cli::SkeletonFile>& files) {
  std::vector<std::string> paths;
  for (const auto& file : files) paths.push_back(file.path);
  return paths;
}

// A kind added to the SDK fails here until share/plugin_templates/<kind>/ exists.
TEST(PluginSkeleton, HasATemplateForEveryComponentKindAndNoOther) {
  std::vector<std::string> sdk_kinds;
  for (const auto kind : orchestrate::all_component_kinds()) sdk_kinds.push_back(orchestrate::to_string(kind));
  std::sort(sdk_kinds.begin(), sdk_kinds.end());
  EXPECT_EQ(plugin_skeleton_kinds(), sdk_kinds);
}

TEST(PluginSkeleton, EveryKindGetsItsSourceTheCMakeFileAndASmokeRecipe) {
  for (const auto& kind : plugin_skeleton_kinds()) {
    const auto files = plugin_skeleton(kind, "my_thing");
    EXPECT_EQ(paths_of(files), (std::vector<std::string>{"CMakeLists.txt", "my_thing.cpp", "smoke.toml"})) << kind;
    for (const auto& file : files) {
      EXPECT_EQ(file.text.find("{{"), std::string::npos) << kind << "/" << file.path << " keeps a placeholder";
      EXPECT_NE(file.text.find("my_thing"), std::string::npos) << kind << "/" << file.path;
    }
  }
}

TEST(PluginSkeleton, FillsInTheNameTheClassNameAndTheKind) {
  const auto files = plugin_skeleton("hook", "loss_every_n2");
  ASSERT_EQ(files.size(), 3u);
  const auto& cmake = files[0].text;
  EXPECT_NE(cmake.find("# The hook plugin \"loss_every_n2\""), std::string::npos) << cmake;
  EXPECT_NE(cmake.find("orchestrate_add_plugin(loss_every_n2 SOURCES loss_every_n2.cpp)"), std::string::npos);
  EXPECT_NE(cmake.find("find_package(orchestrate 0.1 REQUIRED)"), std::string::npos);
  const auto& source = files[1].text;
  EXPECT_NE(source.find("class LossEveryN2 final : public orchestrate::Hook"), std::string::npos) << source;
  EXPECT_NE(source.find("registry.hooks().add(\"loss_every_n2\""), std::string::npos);
  EXPECT_NE(source.find("ORCHESTRATE_PLUGIN(\"loss_every_n2\", \"0.1.0\", register_components)"), std::string::npos);
  EXPECT_NE(files[2].text.find("[[hooks]]\nplugin = \"loss_every_n2\""), std::string::npos) << files[2].text;
}

TEST(PluginSkeleton, ANameThatIsNotSnakeCaseIsAUsageErrorSayingWhatIs) {
  for (const char* bad : {"MyHook", "my-hook", "_my_hook", "my_hook_", "my__hook", "2hook", "", "my hook"}) {
    const auto message = usage_error_of([&] { plugin_skeleton("hook", bad); });
    EXPECT_EQ(message, std::string("new-plugin: '") + bad +
                           "' is not a snake_case name; use lowercase letters, digits and single underscores, "
                           "starting with a letter (e.g. my_hook)");
  }
  for (const char* good : {"a", "my_hook", "hook2", "x86_64"}) EXPECT_NO_THROW(plugin_skeleton("hook", good)) << good;
}

TEST(PluginSkeleton, AnUnknownKindIsAUsageErrorListingTheKindsAndTheClosest) {
  const auto message = usage_error_of([] { plugin_skeleton("optimiser", "my_optimizer"); });
  EXPECT_EQ(message.find("new-plugin: unknown kind 'optimiser' (did you mean optimizer?); kinds: dataset, "), 0u)
      << message;
  EXPECT_NE(message.find("optimizer_wrapper"), std::string::npos);
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_NE(usage_error_of([] { plugin_skeleton("common", "x"); }), "");  // shared files, not a kind
}

TEST(PluginSkeleton, WritesTheFilesIntoANewDirectory) {
  ScratchDir scratch;
  const auto dir = scratch.path() / "plugins" / "my_schedule";
  const auto written = write_plugin_skeleton("lr_schedule", "my_schedule", dir);
  const auto expected = plugin_skeleton("lr_schedule", "my_schedule");
  ASSERT_EQ(written.size(), expected.size());
  for (std::size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(written[i], dir / expected[i].path);
    EXPECT_EQ(file_bytes(written[i].string()), expected[i].text);
  }
}

TEST(PluginSkeleton, WritesIntoAnEmptyExistingDirectory) {
  ScratchDir scratch;
  EXPECT_EQ(write_plugin_skeleton("model", "tiny", scratch.path()).size(), 3u);
}

TEST(PluginSkeleton, ANonEmptyDirectoryOrAFileIsAUsageErrorAndNothingIsWritten) {
  ScratchDir scratch;
  const auto mine = scratch.write("notes.txt", "mine");
  EXPECT_EQ(usage_error_of([&] { write_plugin_skeleton("model", "tiny", scratch.path()); }),
            "new-plugin: directory '" + scratch.path().string() +
                "' is not empty; give a new or empty directory, so nothing of yours is overwritten");
  EXPECT_EQ(usage_error_of([&] { write_plugin_skeleton("model", "tiny", mine); }),
            "new-plugin: '" + mine + "' exists and is not a directory; give a new or empty directory");
  EXPECT_FALSE(std::filesystem::exists(scratch.path() / "tiny.cpp"));
  EXPECT_EQ(file_bytes(mine), "mine");
}

TEST(PluginSkeleton, ABadNameIsReportedBeforeTheDirectoryIsMade) {
  ScratchDir scratch;
  const auto dir = scratch.path() / "new";
  EXPECT_NE(usage_error_of([&] { write_plugin_skeleton("model", "Tiny", dir); }), "");
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// A file the system will not write (here a name longer than a file name
// may be): the system's reason, and nothing left behind, so the same
// command can run again once the name is shortened.
TEST(PluginSkeleton, AFileThatCannotBeWrittenLeavesNothingAndSaysWhy) {
  ScratchDir scratch;
  const auto dir = scratch.path() / "long";
  const std::string name = "n" + std::string(300, 'x');
  std::string message;
  try {
    write_plugin_skeleton("hook", name, dir);
  } catch (const orchestrate::Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("new-plugin: cannot write '"), std::string::npos) << message;
  EXPECT_NE(message.find(": File name too long; nothing was written"), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(dir)) << "the directory it made is gone too";
}

}  // namespace

// A run's record names the library whose code ran. Two files whose
// descriptors give one plugin name: the first (directories in order, files
// by name) is loaded, the second is not, both are named, and a run records
// the first file and its bytes' sha256.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "build_paths.h"
#include "command_runner.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

const std::string kRecipe = R"(schema_version = 1
[run]
batch_size = 8
max_steps = 2
threads = 1
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 32
test_size = 8
[model]
plugin = "lenet"
[optimizer]
plugin = "sgd"
lr = 0.01
)";

std::string sha256_of(const std::string& path) {
  const auto result = run_shell("sha256sum '" + path + "'");
  return result.output.substr(0, 64);
}

// The plugin record of `plugin` in the store's run 1.
PluginRecord recorded(const std::string& db, const std::string& plugin) {
  RunStore store(db, StoreAccess::read_only);
  const auto run = store.find_run("1");
  if (!run) return {};
  for (const auto& record : store.run_details(*run).record.plugins)
    if (record.name == plugin) return record;
  return {};
}

struct TwoFiles {
  ScratchDir dir;
  std::string builtin_copy, impostor;
};

// A copy of the built-in cosine schedule and a file whose descriptor also
// says "cosine" (with a schedule 'impostor'), the impostor named so that it
// sorts `first` or not.
void make_two_files(TwoFiles& files, bool impostor_first) {
  files.builtin_copy = files.dir.file("liborchestrate_cosine.so");
  files.impostor = files.dir.file(impostor_first ? "liborchestrate_a_impostor.so" : "liborchestrate_z_impostor.so");
  fs::copy_file(std::string(build_paths::kTestPluginDir) + "/liborchestrate_cosine.so", files.builtin_copy);
  fs::copy_file(std::string(build_paths::kBadPluginDir) + "/same_name/liborchestrate_same_name.so", files.impostor);
}

std::string not_loaded(const std::string& hidden, const std::string& used) {
  return hidden + " is not loaded: " + used +
         " has the same plugin name and comes first in the plugin path (directories in order, files by name); "
         "rename one of them if both are wanted";
}

TEST(PluginProvenance, TheSecondFileOfAPluginNameIsNotLoadedAndTheRunRecordsTheFirst) {
  TwoFiles files;
  make_two_files(files, false);
  const auto listing = run_orchestrate("plugins --format csv --plugin-path " + files.dir.path().string());
  EXPECT_EQ(listing.exit_code, 0) << listing.output;
  EXPECT_NE(listing.output.find("orchestrate: note: " + not_loaded(files.impostor, files.builtin_copy)),
            std::string::npos)
      << listing.output;
  EXPECT_EQ(listing.output.find("impostor,"), std::string::npos) << listing.output;

  const std::string db = files.dir.file("runs.db");
  const auto run = run_orchestrate("run " + files.dir.write("r.toml", kRecipe) +
                                   " --quiet --set schedule.plugin=cosine --db " + db + " --plugin-path " +
                                   files.dir.path().string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const PluginRecord cosine = recorded(db, "cosine");
  EXPECT_EQ(cosine.library_path, files.builtin_copy);
  EXPECT_EQ(cosine.sha256, sha256_of(files.builtin_copy));
  EXPECT_NE(cosine.sha256, sha256_of(files.impostor));
}

TEST(PluginProvenance, WhenTheOtherFileComesFirstItIsTheOneRecorded) {
  TwoFiles files;
  make_two_files(files, true);
  const std::string db = files.dir.file("runs.db");
  const auto run = run_orchestrate("run " + files.dir.write("r.toml", kRecipe) +
                                   " --quiet --set schedule.plugin=impostor --db " + db + " --plugin-path " +
                                   files.dir.path().string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find(not_loaded(files.builtin_copy, files.impostor)), std::string::npos) << run.output;
  const PluginRecord cosine = recorded(db, "cosine");
  EXPECT_EQ(cosine.library_path, files.impostor);
  EXPECT_EQ(cosine.version, "9.9.9");
  EXPECT_EQ(cosine.sha256, sha256_of(files.impostor));
}

}  // namespace
}  // namespace orchestrate::testing

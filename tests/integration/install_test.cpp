// `cmake --install` gives a prefix that works wherever it is moved: the front
// end finds the engine, the engine its libraries and plugins, all relative to
// the executables; and the front end finds LibTorch for the engine when it is
// not where the engine was built against (another machine's torch wheel).
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "build_paths.h"
#include "command_runner.h"
#include "orchestrate/api.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

const std::string kTinyRecipe = R"(schema_version = 1
[run]
name = "relocated"
batch_size = 32
max_steps = 20
log_every = 10
threads = 1
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
train_size = 1024
test_size = 128
[model]
plugin = "lenet"
[optimizer]
plugin = "adam"
lr = 0.003
)";

class RelocatedInstall : public ::testing::Test {
 protected:
  // One install for the suite, moved away from where it was installed.
  static void SetUpTestSuite() {
    scratch_ = std::make_unique<ScratchDir>();
    const auto installed = run_shell(std::string(ORCHESTRATE_CMAKE) + " --install " + std::string(orchestrate::build_paths::kBuildDir) + " --prefix " +
                                     scratch_->file("installed") + " >/dev/null");
    ASSERT_EQ(installed.exit_code, 0) << installed.output;
    fs::rename(scratch_->path() / "installed", scratch_->path() / "moved");
  }
  static void TearDownTestSuite() { scratch_.reset(); }

  static fs::path prefix() { return scratch_->path() / "moved"; }
  static std::string orchestrate(const std::string& arguments) {
    return "env -u ORCHESTRATE_PLUGIN_PATH -u ORCHESTRATE_DB -u ORCHESTRATE_TORCH_LIB " +
           (prefix() / "bin" / "orchestrate").string() + " " + arguments;
  }

  static std::unique_ptr<ScratchDir> scratch_;
};

std::unique_ptr<ScratchDir> RelocatedInstall::scratch_;

TEST_F(RelocatedInstall, RecordsNoPathOfTheBuildTree) {
  for (const char* file : {"bin/orchestrate", "libexec/orchestrate/orchestrate-engine"}) {
    const auto dynamic = run_shell("readelf -d " + (prefix() / file).string());
    ASSERT_EQ(dynamic.exit_code, 0) << dynamic.output;
    EXPECT_EQ(dynamic.output.find(orchestrate::build_paths::kBuildDir), std::string::npos) << file << "\n" << dynamic.output;
    EXPECT_NE(dynamic.output.find("$ORIGIN"), std::string::npos) << file << "\n" << dynamic.output;
  }
}

TEST_F(RelocatedInstall, AnswersVersionAndListsTheInstalledPlugins) {
  const auto version = run_shell(orchestrate("--version"));
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.output, std::string("orchestrate ") + orchestrate::version() + " (LibTorch 2.11.0, plugin API " +
                                std::to_string(kPluginApiVersion) + ")\n");
  const auto plugins = run_shell(orchestrate("plugins --format csv"));
  ASSERT_EQ(plugins.exit_code, 0) << plugins.output;
  const std::string plugin_dir = (prefix() / "lib" / "orchestrate" / "plugins").string();
  EXPECT_NE(plugins.output.find("dataset,mock,mock,"), std::string::npos) << plugins.output;
  EXPECT_NE(plugins.output.find(plugin_dir + "/liborchestrate_lenet.so"), std::string::npos) << plugins.output;
}

TEST_F(RelocatedInstall, TrainsAndListsTheRun) {
  ScratchDir dir;
  const auto recipe = dir.write("tiny.toml", kTinyRecipe);
  const auto db = dir.file("runs.db");
  const auto run = run_shell(orchestrate("run " + recipe + " --db " + db + " --quiet"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto runs = run_shell(orchestrate("runs --db " + db + " --format csv"));
  ASSERT_EQ(runs.exit_code, 0) << runs.output;
  EXPECT_NE(runs.output.find(",relocated,train,,finished,"), std::string::npos) << runs.output;
}

// The shipped recipes travel with the prefix: listed, and run by name.
TEST_F(RelocatedInstall, InstallsTheDocumentationTheReadmeLinksTo) {
  const auto docs = prefix() / "share" / "doc" / "orchestrate";
  for (const char* page : {"getting-started.md", "cli.md", "reports.md", "design.md", "CHANGELOG.md", "LICENSE",
                           "schemas/runs.schema.json", "schemas/report-throughput.schema.json"})
    EXPECT_TRUE(std::filesystem::is_regular_file(docs / page)) << (docs / page);
  // The man page and the bash completion, where man and bash-completion look under a prefix.
  EXPECT_TRUE(std::filesystem::is_regular_file(prefix() / "share" / "man" / "man1" / "orchestrate.1"));
  EXPECT_TRUE(std::filesystem::is_regular_file(prefix() / "share" / "bash-completion" / "completions" / "orchestrate"));
}

TEST_F(RelocatedInstall, ListsTheShippedRecipesAndRunsOneByName) {
  const auto listed = run_shell(orchestrate("recipes --paths --format csv"));
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find((prefix() / "share" / "orchestrate" / "recipes" / "resnet50_32k_lars.toml").string()),
            std::string::npos)
      << listed.output;
  const auto dry = run_shell(orchestrate("run resnet50_32k_lars --smoke --dry-run"));
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find("plugin = \"lars\""), std::string::npos) << dry.output;
}

// A copy of the prefix whose engine records a LibTorch directory that does
// not exist, as on a machine with torch installed at another path.
class TorchElsewhere : public RelocatedInstall {
 protected:
  void SetUp() override {
    const fs::path engine = copy_ / "libexec" / "orchestrate" / "orchestrate-engine";
    // Hard links for the rest; the engine a file of its own, as it is edited.
    ASSERT_EQ(run_shell("cp -al " + prefix().string() + " " + copy_.string()).exit_code, 0);
    fs::remove(engine);
    fs::copy_file(prefix() / "libexec" / "orchestrate" / "orchestrate-engine", engine);
    const auto script = dir_.write("set_rpath.cmake", "file(RPATH_SET FILE \"" + engine.string() +
                                                          "\" NEW_RPATH \"$ORIGIN/../../lib:/nonexistent/torch/lib\")\n");
    const auto edited = run_shell(std::string(ORCHESTRATE_CMAKE) + " -P " + script);
    ASSERT_EQ(edited.exit_code, 0) << edited.output;
    fs::create_directories(dir_.path() / "fakebin");
  }

  // `orchestrate ARGUMENTS` with ENVIRONMENT, and a `python3` first on $PATH
  // that runs `python` ("": one that fails, as where python3 has no torch).
  std::string copied_orchestrate(const std::string& environment, const std::string& python,
                                 const std::string& arguments) {
    const fs::path fake_python = dir_.path() / "fakebin" / "python3";
    dir_.write("fakebin/python3", python.empty() ? "#!/bin/sh\nexit 1\n" : "#!/bin/sh\nexec " + python + " \"$@\"\n");
    fs::permissions(fake_python, fs::perms::owner_all);
    return "env -u ORCHESTRATE_PLUGIN_PATH -u ORCHESTRATE_TORCH_LIB -u LD_LIBRARY_PATH PATH=" +
           fake_python.parent_path().string() + ":/usr/bin:/bin " + environment + " " +
           (copy_ / "bin" / "orchestrate").string() + " " + arguments;
  }

  ScratchDir dir_;
  fs::path copy_ = dir_.path() / "prefix";
};

TEST_F(TorchElsewhere, WithoutAnyLibTorchTheErrorSaysHowToPointAtIt) {
  const auto result = run_shell(copied_orchestrate("", "", "plugins"));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.output, "orchestrate: error: LibTorch not found for " +
                               (copy_ / "libexec" / "orchestrate" / "orchestrate-engine").string() +
                               ": not in the directories it was built against, $LD_LIBRARY_PATH or python3's torch "
                               "package; set ORCHESTRATE_TORCH_LIB to the directory holding libtorch_cpu.so (pip "
                               "install torch==2.11.0, then its site-packages/torch/lib)\n");
}

TEST_F(TorchElsewhere, OrchestrateTorchLibPointsAtIt) {
  const auto result =
      run_shell(copied_orchestrate("ORCHESTRATE_TORCH_LIB=" ORCHESTRATE_TORCH_LIBRARY_DIR, "", "plugins --format csv"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("model,lenet,lenet,"), std::string::npos) << result.output;
  const auto wrong = run_shell(copied_orchestrate("ORCHESTRATE_TORCH_LIB=/nonexistent", "", "plugins"));
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_EQ(wrong.output,
            "orchestrate: error: ORCHESTRATE_TORCH_LIB=/nonexistent holds no libtorch_cpu.so; set it to LibTorch's "
            "lib directory (the torch wheel's site-packages/torch/lib)\n");
}

TEST_F(TorchElsewhere, Python3sTorchPackageIsFound) {
  ASSERT_STRNE(ORCHESTRATE_PYTHON, "") << "configure with -DORCHESTRATE_PYTHON (scripts/setup does)";
  const auto result = run_shell(copied_orchestrate("", ORCHESTRATE_PYTHON, "plugins --format csv"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("model,lenet,lenet,"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace orchestrate::testing

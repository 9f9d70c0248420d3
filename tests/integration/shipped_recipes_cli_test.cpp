// The shipped recipes as a user meets them: `orchestrate recipes` lists them
// with their descriptions, `orchestrate run NAME` finds one by name, and a
// recipe whose user-provided data is missing says what it expects in one
// line, before any run is recorded.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "build_paths.h"
#include "command_runner.h"

namespace orchestrate::testing {
namespace {

std::string first_comment(const std::filesystem::path& recipe) {
  std::ifstream in(recipe);
  std::string line;
  std::getline(in, line);
  return line.rfind("# ", 0) == 0 ? line.substr(2) : "";
}

TEST(ShippedRecipes, RecipesListsEveryRecipeWithItsFirstCommentLine) {
  const auto listed = run_orchestrate("recipes");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(orchestrate::build_paths::kSourceDir) + "/recipes")) {
    if (entry.path().extension() != ".toml") continue;
    ++count;
    const std::string description = first_comment(entry.path());
    EXPECT_FALSE(description.empty()) << entry.path() << " has no one-line description on its first line";
    EXPECT_NE(listed.output.find(entry.path().stem().string() + "  "), std::string::npos) << listed.output;
    EXPECT_NE(listed.output.find(description), std::string::npos) << listed.output;
  }
  EXPECT_GE(count, 13);
  const auto json = run_orchestrate("recipes --format json");
  EXPECT_NE(json.output.find("\"name\": \"resnet50_32k_lars\",\n    \"description\": \"ResNet-50 on ImageNet"),
            std::string::npos)
      << json.output;
}

// A pure query: the front end answers it alone, from <prefix>/share/orchestrate/recipes.
TEST(ShippedRecipes, TheFrontEndListsThemWithoutTheEngineFromItsOwnPrefix) {
  ScratchDir dir;
  std::filesystem::create_directories(dir.path() / "bin");
  std::filesystem::create_directories(dir.path() / "share" / "orchestrate" / "recipes");
  std::filesystem::copy_file(orchestrate::build_paths::kOrchestrateBin, dir.path() / "bin" / "orchestrate");
  dir.write("share/orchestrate/recipes/tiny.toml", "# A tiny recipe.\nschema_version = 1\n");
  dir.write("share/orchestrate/recipes/notes.txt", "# not a recipe\n");
  const auto listed = run_shell((dir.path() / "bin" / "orchestrate").string() + " recipes");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("tiny  A tiny recipe."), std::string::npos) << listed.output;
  EXPECT_EQ(listed.output.find("notes"), std::string::npos) << listed.output;
}

TEST(ShippedRecipes, RunTakesAShippedRecipeByNameAndSmokeChangesOnlyWhatItSays) {
  const auto dry = run_orchestrate("run resnet50_dgc --smoke --dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  // Replaced: the data and the run's length; kept: the recipe's components.
  for (const char* expected : {"plugin = \"mock\"", "num_classes = 1000", "height = 64", "max_steps = 2",
                               "plugin = \"dgc\"", "plugin = \"strategy\"", "stages = \"5:0.001->0.4,30:0.4",
                               "plugin = \"resnet_v1\"", "depth = 50", "smoke: [data] tfrecord -> mock: 1000 classes"})
    EXPECT_NE(dry.output.find(expected), std::string::npos) << expected << "\n" << dry.output;

  // Transfer learning: the exclusions stay, the pretrained file (absent here) is not read.
  const auto transfer = run_orchestrate("run flowers_transfer --smoke --dry-run");
  ASSERT_EQ(transfer.exit_code, 0) << transfer.output;
  for (const char* expected : {"exclude = [\"@logits\"]", "/initial_weights.safetensors\"", "loss_scale = 1024.0",
                               "smoke: init_from \"resnet50.safetensors\" is not read: the model's own initial weights "
                               "stand in", "dir = \"", "/serving\"", "num_classes = 5"})
    EXPECT_NE(transfer.output.find(expected), std::string::npos) << expected << "\n" << transfer.output;
}

// A mistyped recipe name gets the shipped recipe it is nearest, in one
// line, where it had got only "recipe file not found".
TEST(ShippedRecipes, AMistypedNameSuggestsTheNearestShippedRecipe) {
  const auto typo = run_orchestrate("run fashion_mnst --dry-run");
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_EQ(typo.output, "orchestrate: error: fashion_mnst: no such recipe file or shipped recipe; did you mean the "
                         "shipped recipe 'fashion_mnist'? (orchestrate recipes lists them)\n");
  // A path, or a name like no shipped one, still says the file is missing.
  const auto path = run_orchestrate("run ./fashion_mnst.toml --dry-run");
  EXPECT_NE(path.output.find("recipe file not found"), std::string::npos) << path.output;
  const auto unrelated = run_orchestrate("run zzzzzzzz --dry-run");
  EXPECT_NE(unrelated.output.find("recipe file not found"), std::string::npos) << unrelated.output;
}

// The docs' recipes/NAME.toml typed outside the source tree, and NAME.toml
// where no such file is: each says which file it takes, or would.
TEST(ShippedRecipes, AShippedRecipesFileNameNotFoundHereSaysWhichFileItMeans) {
  ScratchDir dir;
  const auto elsewhere = run_orchestrate("run " + dir.file("recipes/fashion_mnist.toml") + " --dry-run");
  EXPECT_EQ(elsewhere.exit_code, 2) << elsewhere.output;
  EXPECT_EQ(elsewhere.output, "orchestrate: error: " + dir.file("recipes/fashion_mnist.toml") + ": no such file; for "
                              "the shipped recipe give its name alone, fashion_mnist (orchestrate recipes lists them)\n");
  ASSERT_FALSE(std::filesystem::exists("fashion_mnist.toml")) << "the test needs a directory without one";
  const auto file_name = run_orchestrate("run fashion_mnist.toml --dry-run");
  EXPECT_EQ(file_name.exit_code, 0) << file_name.output;
  EXPECT_NE(file_name.output.find("orchestrate: note: no fashion_mnist.toml here; the shipped recipe /"),
            std::string::npos)
      << file_name.output;
  const auto bare = run_orchestrate("run fashion_mnist --dry-run");
  EXPECT_EQ(bare.output.find("note:"), std::string::npos) << "a bare name is the shipped recipe's: " << bare.output;
}

// The shipped sweep spec, by its name, as a shipped recipe is.
TEST(ShippedRecipes, SweepTakesAShippedSpecByName) {
  ScratchDir dir;
  const auto sweep = run_orchestrate("sweep fashion_mnist_lr --dry-run --db " + dir.file("runs.db"));
  EXPECT_EQ(sweep.exit_code, 0) << sweep.output;
  EXPECT_NE(sweep.output.find("sweep fashion_mnist_lr: 16 trials of /"), std::string::npos) << sweep.output;
}

// Dimension-reduce training's stage 2 (the lead's dim_reduce.toml, once
// shipped) smoke-runs without its stage 1: stand-in snapshots, its own PCA.
TEST(ShippedRecipes, SmokeRunsAStage2WithoutItsStage1) {
  ScratchDir dir;
  const auto recipe = dir.write("stage2.toml", R"(# Stage 2 of dimension-reduce training.
schema_version = 1
[run]
epochs = 2
[data]
plugin = "mock"
num_classes = 4
[model]
plugin = "convnet"
[optimizer]
plugin = "sgd"
lr = 1.0
[checkpoint]
init_from = "checkpoints/orchestrate.db/run-1/step-00000936"
[dim_reduce]
enabled = true
snapshots = "snapshots/orchestrate.db/run-1"
)");
  const auto run = run_shell("cd " + dir.path().string() + " && env -u ORCHESTRATE_PLUGIN_PATH -u ORCHESTRATE_DB TMPDIR=" +
                             dir.path().string() + " " + orchestrate::build_paths::kOrchestrateBin + " run " + recipe + " --smoke --quiet --db " +
                             dir.file("o.db"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("smoke: [dim_reduce] stage 1's snapshots are not read: 3 snapshots of the initial weights "
                            "plus noise stand in"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("finished after 2 steps"), std::string::npos) << run.output;
  // The scratch directory goes when the run finishes, and no path into it is printed.
  EXPECT_NE(run.output.find("(removed when the run finishes; kept to look at when it fails or is interrupted)"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("\ncheckpoint "), std::string::npos) << run.output;
  const auto scratch_parent = dir.path() / "orchestrate-smoke";
  EXPECT_TRUE(!std::filesystem::exists(scratch_parent) || std::filesystem::is_empty(scratch_parent)) << run.output;
  const auto shown = run_orchestrate("show 1 --db " + dir.file("o.db"));
  EXPECT_NE(shown.output.find("PCA of 3 weight snapshots"), std::string::npos) << shown.output;
}

TEST(ShippedRecipes, MissingImageNetIsOneLineSayingWhatTheRecipeExpectsAndRecordsNothing) {
  ScratchDir dir;
  const std::string db = dir.file("orchestrate.db");
  const auto run = run_orchestrate("run resnet50_32k_lars --db " + db + " --set data.dir=" + dir.file("imagenet"));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_EQ(run.output.rfind("orchestrate: error: ", 0), 0u) << run.output;
  EXPECT_EQ(run.output.find('\n'), run.output.size() - 1) << "not one line:\n" << run.output;
  for (const char* expected : {"[data] dir: \"", "is not a directory (nothing is there)", "--set data.dir=",
                               "scripts/convert_dataset tfrecord", "(this recipe expects ImageNet (ILSVRC-2012) as TFRecord files: DIR/train-00000-of-01024"})
    EXPECT_NE(run.output.find(expected), std::string::npos) << expected << "\n" << run.output;
  EXPECT_FALSE(std::filesystem::exists(db)) << "a run store was written";
}

// One rule for data that is not there, whatever the dataset: exit code 2, one
// line naming the key where the recipe (or the --set) gives it, nothing
// recorded. Fashion-MNIST's had exited 1 with no place and recorded a failed run.
TEST(ShippedRecipes, EveryDatasetWithItsDataMissingIsOneLineWithItsPlaceAndRecordsNothing) {
  ScratchDir dir;
  const std::string nowhere = dir.file("nowhere");
  const struct {
    std::string dataset, keys, expected;
  } cases[] = {
      {"fashion_mnist", "dir = \"" + nowhere + "\"", ":6:7: [data] dir: \"" + nowhere + "\" is not a directory"},
      {"image_folder", "root = \"" + nowhere + "\"", ":6:8: [data] root: \"" + nowhere + "\" is not a directory"},
      {"tfrecord", "dir = \"" + nowhere + "\"\nnum_classes = 10", ":6:7: [data] dir: \"" + nowhere + "\" is not a directory"},
      {"idx", "train_images = \"" + nowhere + "\"", ":6:16: [data] train_images: \"" + nowhere + "\" is not a file"},
  };
  for (const auto& c : cases) {
    const std::string recipe = dir.write(c.dataset + ".toml", "schema_version = 1\n[run]\nepochs = 1\n[data]\nplugin = \"" +
                                                                 c.dataset + "\"\n" + c.keys + "\n[model]\nplugin = \"lenet\"\n"
                                                                 "[optimizer]\nplugin = \"sgd\"\nlr = 0.1\n");
    const std::string db = dir.file(c.dataset + ".db");
    const auto run = run_orchestrate("run " + recipe + " --db " + db);
    EXPECT_EQ(run.exit_code, 2) << c.dataset << "\n" << run.output;
    EXPECT_EQ(run.output.rfind("orchestrate: error: " + recipe + c.expected, 0), 0u) << c.dataset << "\n" << run.output;
    EXPECT_EQ(run.output.find('\n'), run.output.size() - 1) << "not one line:\n" << run.output;
    EXPECT_FALSE(std::filesystem::exists(db)) << c.dataset << ": a run store was written";
  }
  // Given with --set, the place is the --set.
  const auto set = run_orchestrate("run " + dir.file("fashion_mnist.toml") + " --db " + dir.file("set.db") +
                                   " --set data.dir=" + nowhere + "2");
  EXPECT_EQ(set.exit_code, 2) << set.output;
  EXPECT_NE(set.output.find("--set data.dir=" + nowhere + "2: [data] dir: "), std::string::npos) << set.output;
}

}  // namespace
}  // namespace orchestrate::testing

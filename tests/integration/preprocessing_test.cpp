// [preprocessing] through the whole host: a run that augments (random-resized
// crops, flips, colour jitter) takes the same steps with 0, 1 or 3 pipeline
// threads, because every random choice comes from the sample's seed; and its
// serving export carries the eval variant's geometry and normalization.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "command_runner.h"
#include "orchestrate/testing/scratch_dir.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

// RGB images of 40x52 cut and resized to 32x32 by the resnet preset.
const std::string kRecipe = R"(schema_version = 1
[run]
batch_size = 16
max_steps = 6
[data]
plugin = "mock"
channels = 3
height = 40
width = 52
train_size = 128
test_size = 64
[preprocessing]
plugin = "resnet"
size = 32
resize_size = 36
brightness = 0.2
saturation = 0.3
[model]
plugin = "convnet"
[optimizer]
plugin = "adam"
lr = 0.001
)";

std::vector<double> losses_with_workers(ScratchDir& dir, int workers) {
  const std::string db = dir.file("w" + std::to_string(workers) + ".db");
  const auto run = run_orchestrate("run " + dir.write("r.toml", kRecipe) + " --db " + db +
                                   " --quiet --set run.num_workers=" + std::to_string(workers));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::vector<double> losses;
  for (const auto& step : RunStore(db).step_timings(1)) losses.push_back(step.loss);
  return losses;
}

TEST(Preprocessing, AugmentedTrainingIsTheSameWhateverTheWorkerCount) {
  ScratchDir dir;
  const auto alone = losses_with_workers(dir, 0);
  ASSERT_EQ(alone.size(), 6u);
  EXPECT_EQ(losses_with_workers(dir, 1), alone);
  EXPECT_EQ(losses_with_workers(dir, 3), alone);
}

TEST(Preprocessing, TheServingExportCarriesTheEvalVariant) {
  ScratchDir dir;
  const std::string recipe = kRecipe + "[export]\ndir = \"" + dir.file("serving") + "\"\n";
  const auto run = run_orchestrate("run " + dir.write("r.toml", recipe) + " --db " + dir.file("runs.db") + " --quiet");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::ifstream in(dir.file("serving/r/1/preprocessing.json"));
  ASSERT_TRUE(in) << run.output;
  const auto spec = nlohmann::json::parse(in);
  EXPECT_EQ(spec.at("height"), 32);
  EXPECT_EQ(spec.at("resize_shorter"), 36);
  EXPECT_EQ(spec.at("central_fraction"), 1.0);
  EXPECT_EQ(spec.at("mean"), (std::vector<double>{0.485, 0.456, 0.406}));
}

}  // namespace
}  // namespace orchestrate::testing

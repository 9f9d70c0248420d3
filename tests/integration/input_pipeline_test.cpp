// The input pipeline through the whole host: its thread count, the decoded-
// example cache and the shuffle buffer change how batches are made, never
// which steps a run takes; a shuffle buffer where it does not apply is
// refused in one line; `bench-input` times the pipeline alone.
#include <gtest/gtest.h>

#include <regex>

#include "command_runner.h"
#include "orchestrate/testing/scratch_dir.h"
#include "run_store.h"

namespace orchestrate::testing {
namespace {

// The model and optimizer both recipes train, without evaluation.
const char* const kConvNetWithoutEval = R"([model]
plugin = "convnet"
[optimizer]
plugin = "adam"
lr = 0.001
[eval]
enabled = false
)";

// 8 steps an epoch; 12 steps reach into the second epoch, which the cache serves.
const std::string kMockRecipe = R"(schema_version = 1
[run]
batch_size = 16
max_steps = 12
[data]
plugin = "mock"
channels = 3
height = 40
width = 52
train_size = 128
test_size = 32
[preprocessing]
plugin = "resnet"
size = 32
resize_size = 36
)" + std::string(kConvNetWithoutEval);

// The first 16 Fashion-MNIST images as TFRecord files: 4 steps an epoch.
const std::string kTfRecordRecipe = std::string(R"(schema_version = 1
[run]
batch_size = 4
max_steps = 8
[data]
plugin = "tfrecord"
dir = ")") + ORCHESTRATE_SOURCE_DIR + R"(/tests/data/fashion_mnist_tfrecord"
channels = 1
height = 28
width = 28
index_cache_dir = "off"
)" + kConvNetWithoutEval;

std::vector<double> losses(ScratchDir& dir, const std::string& recipe, const std::string& sets) {
  static int runs = 0;
  const std::string db = dir.file("r" + std::to_string(++runs) + ".db");
  const auto run = run_orchestrate("run " + dir.write("r.toml", recipe) + " --db " + db + " --quiet " + sets);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::vector<double> out;
  for (const auto& step : RunStore(db).step_timings(1)) out.push_back(step.loss);
  return out;
}

TEST(InputPipeline, ThreadsAndTheCacheLeaveTheStepsUnchanged) {
  ScratchDir dir;
  const auto alone = losses(dir, kMockRecipe, "--set run.num_workers=0");
  ASSERT_EQ(alone.size(), 12u);
  EXPECT_EQ(losses(dir, kMockRecipe, "--set run.num_workers=3 --set run.cache_mb=16"), alone);
}

// A TFRecord stream shuffled through a buffer (the orders themselves are
// epoch_plan_test's): the same steps whatever the thread count.
TEST(InputPipeline, AShuffledStreamTakesTheSameStepsOnAnyThreadCount) {
  ScratchDir dir;
  const auto buffered = losses(dir, kTfRecordRecipe, "--set run.shuffle_buffer_size=4 --set run.num_workers=0");
  ASSERT_EQ(buffered.size(), 8u);
  EXPECT_EQ(losses(dir, kTfRecordRecipe, "--set run.shuffle_buffer_size=4 --set run.num_workers=2"), buffered);
}

TEST(InputPipeline, AShuffleBufferForARandomAccessDatasetIsRefused) {
  ScratchDir dir;
  const auto run = run_orchestrate("run " + dir.write("r.toml", kMockRecipe) + " --db " + dir.file("r.db") +
                                   " --quiet --set run.shuffle_buffer_size=100");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("[run] shuffle_buffer_size = 100: [data] mock is read by index and fully shuffled every "
                            "epoch; a shuffle buffer is for stream datasets (tfrecord); remove the key"),
            std::string::npos)
      << run.output;
}

TEST(InputPipeline, BenchInputTimesThePipelineAlone) {
  ScratchDir dir;
  const auto run = run_orchestrate("bench-input " + dir.write("r.toml", kMockRecipe) +
                                   " --batches 5 --set run.num_workers=2");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(std::regex_search(run.output, std::regex(R"(first_batch_s=[0-9.]+ images_per_s=[0-9.]+ batches=5 )"
                                                       R"(batch_size=16 workers=2 prefetch=4 device=cpu)")))
      << run.output;
}

}  // namespace
}  // namespace orchestrate::testing

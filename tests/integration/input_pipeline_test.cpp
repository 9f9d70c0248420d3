// The input pipeline through the whole host: its thread count, the decoded-
// example cache and the shuffle buffer change how batches are made, never
// which steps a run takes; a shuffle buffer where it does not apply is
// refused in one line; `bench-input` times the pipeline alone. Decoding only
// the crop's window of each JPEG trains exactly as decoding it whole does.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "build_paths.h"
#include "command_runner.h"
#include "orchestrate/testing/python_reference.h"
#include "orchestrate/testing/scratch_dir.h"
#include "store/run_store.h"

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
dir = ")") + orchestrate::build_paths::kSourceDir + R"(/tests/data/fashion_mnist_tfrecord"
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
// Photo-like JPEGs of 100 x 80 in an image folder, two classes.
void write_small_photos(const ScratchDir& dir) {
  run_python(R"(
import gzip, os, numpy as np
from PIL import Image
raw = gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz").read()
photos = np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 28, 28)
for split, count in (("train", 40), ("val", 4)):
    for i in range(count):
        folder = os.path.join(")" + dir.path().string() + R"(", split, "class%d" % (i % 2))
        os.makedirs(folder, exist_ok=True)
        planes = [np.asarray(Image.fromarray(photos[3 * i + k]).resize((100, 80), Image.BICUBIC)) for k in range(3)]
        Image.fromarray(np.stack(planes, axis=2)).save(os.path.join(folder, "%d.jpg" % i), quality=90)
)");
}

std::string small_photos_recipe(const ScratchDir& dir, int size) {
  return R"(schema_version = 1
[run]
batch_size = 8
max_steps = 6
num_workers = 2
[data]
plugin = "image_folder"
root = ")" + dir.path().string() + R"("
channels = 3
[preprocessing]
plugin = "resnet"
size = )" + std::to_string(size) + "\nresize_size = " + std::to_string(size + 4) + "\n" + kConvNetWithoutEval;
}

// Photos too small for a reduced DCT scale at a crop of 56 (a window needs
// sides of twice that): each crop's window decoded alone is exactly that
// region of the whole decode, so the steps are those of the cache, under
// which every image is decoded whole and the window cut out. At a crop of
// 32 some windows are decoded at half scale, and the steps differ: the test
// tells the two paths apart.
TEST(InputPipeline, DecodingOnlyTheCropTakesTheStepsOfAWholeDecode) {
  ScratchDir dir;
  write_small_photos(dir);
  const auto windowed = losses(dir, small_photos_recipe(dir, 56), "");
  ASSERT_EQ(windowed.size(), 6u);
  EXPECT_EQ(losses(dir, small_photos_recipe(dir, 56), "--set run.cache_mb=16"), windowed);
  const auto reduced = losses(dir, small_photos_recipe(dir, 32), "");
  ASSERT_EQ(reduced.size(), 6u);
  EXPECT_NE(losses(dir, small_photos_recipe(dir, 32), "--set run.cache_mb=16"), reduced);
}

TEST(InputPipeline, AShuffledStreamTakesTheSameStepsOnAnyThreadCount) {
  ScratchDir dir;
  const auto buffered = losses(dir, kTfRecordRecipe, "--set run.shuffle_buffer_size=4 --set run.num_workers=0");
  ASSERT_EQ(buffered.size(), 8u);
  EXPECT_EQ(losses(dir, kTfRecordRecipe, "--set run.shuffle_buffer_size=4 --set run.num_workers=2"), buffered);
}

// [run] data_on_device: the split read once and kept as one tensor, each
// batch gathered from it, takes the pipeline's steps to the bit, a shuffled
// stream's included; with a [preprocessing] that augments per sample it is
// refused in one line.
TEST(InputPipeline, ASplitKeptOnTheDeviceTakesThePipelinesStepsOrIsRefusedInOneLine) {
  ScratchDir dir;
  const std::string stream = "--set run.shuffle_buffer_size=4 --set run.num_workers=2";
  const auto piped = losses(dir, kTfRecordRecipe, stream);
  ASSERT_EQ(piped.size(), 8u);
  EXPECT_EQ(losses(dir, kTfRecordRecipe, stream + " --set 'run.data_on_device=\"on\"'"), piped);
  const auto kept = RunStore(dir.file("r2.db")).events(1);
  const bool said = std::any_of(kept.begin(), kept.end(), [](const EventRecord& e) {
    return e.kind == "data_on_device" &&
           e.message.find("the training split (16 examples, 0.0 MiB) is kept on cpu") == 0;
  });
  EXPECT_TRUE(said) << "the run's events say where its data is";

  const auto refused = run_orchestrate("run " + dir.write("r.toml", kMockRecipe) + " --db " + dir.file("x.db") +
                                       " --quiet --set 'run.data_on_device=\"on\"'");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("[run] data_on_device = \"on\": the training split cannot be kept on the device: "
                                "[preprocessing] resnet prepares each sample on the host, anew every epoch; use "
                                "\"auto\" or \"off\""),
            std::string::npos)
      << refused.output;
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

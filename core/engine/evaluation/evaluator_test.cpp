#include "engine/evaluation/evaluator.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "engine/input/input_test_data.h"

namespace orchestrate {
namespace {

using testing::CountingDataset;
using testing::PassThrough;

// Logits that pick class (pixel value % 10): example i shows i and is labelled
// i % 10, so every image is scored right.
at::Tensor logits_of_pixels(const at::Tensor& images) {
  const auto pixel = images.reshape({images.size(0), -1}).select(1, 0).to(at::kLong);
  return at::one_hot(pixel.remainder(10), 10).to(at::kFloat);
}

// The progress line hears of every batch, from 0 at the start to all of them,
// with the images scored so far: 23 examples in batches of 5 are 5 batches.
TEST(Evaluator, TellsOfEachBatchAndTheImagesScoredSoFar) {
  const CountingDataset data(23);
  const PassThrough preprocessing;
  PipelineOptions options;
  options.workers = 0;
  options.finish_on_host = true;
  Evaluator evaluator(SampleSource{data, preprocessing}, /*batch_size=*/5, c10::Device(c10::kCPU), /*rounds=*/1,
                      options);
  std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> heard;
  const EvalResult result =
      evaluator.run(logits_of_pixels, {}, [&](std::int64_t done, std::int64_t batches, std::int64_t images) {
        heard.emplace_back(done, batches, images);
      });
  const std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> expected{
      {0, 5, 0}, {1, 5, 5}, {2, 5, 10}, {3, 5, 15}, {4, 5, 20}, {5, 5, 23}};
  EXPECT_EQ(heard, expected);
  EXPECT_EQ(result.examples, 23);
  EXPECT_DOUBLE_EQ(result.top1, 1.0);
}

}  // namespace
}  // namespace orchestrate

// Data-parallel training end to end: `orchestrate run --nproc 2` on the real
// Fashion-MNIST against one process with the doubled batch.
#include <gtest/gtest.h>

#include <ATen/ops/allclose.h>

#include <cmath>

#include "command_runner.h"
#include "run_store.h"
#include "safetensors.h"

namespace orchestrate::testing {
namespace {

const std::string kRecipe = std::string(ORCHESTRATE_SOURCE_DIR) + "/recipes/fashion_mnist.toml";

std::string newest_weights(const std::string& checkpoint_dir, std::int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%08lld", static_cast<long long>(step));
  return checkpoint_dir + "/run-1/" + name + "/model.safetensors";
}

// Synchronous data parallelism: 2 ranks with batch 32 each average their
// gradients into the update one process makes from the same 64 images, so
// both take the same steps: the same losses, and the same weights after 12
// Adam updates (up to float summation order).
TEST(DataParallel, TwoRanksTakeTheSameStepsAsOneProcessWithTheDoubledBatch) {
  ScratchDir dir;
  const std::string common = " --set data.limit=2048 --set run.max_steps=12 --set run.device=cpu --quiet";
  const auto single = run_orchestrate("run " + kRecipe + common + " --set run.batch_size=64 --set checkpoint.dir=" +
                                      dir.file("single") + " --db " + dir.file("single.db"));
  ASSERT_EQ(single.exit_code, 0) << single.output;
  const auto job = run_orchestrate("run " + kRecipe + common + " --nproc 2 --set run.batch_size=32 --set checkpoint.dir=" +
                                   dir.file("job") + " --db " + dir.file("job.db"));
  ASSERT_EQ(job.exit_code, 0) << job.output;
  EXPECT_NE(job.output.find("[rank 0] run 1 'fashion_mnist_convnet' finished after 12 steps"), std::string::npos)
      << job.output;

  RunStore single_store(dir.file("single.db")), job_store(dir.file("job.db"));
  const auto one = single_store.find_run("fashion_mnist_convnet");
  const auto two = job_store.find_run("fashion_mnist_convnet");
  ASSERT_TRUE(one && two);
  const auto one_steps = single_store.step_timings(one->id);
  const auto two_steps = job_store.step_timings(two->id);
  ASSERT_EQ(one_steps.size(), 12u);
  ASSERT_EQ(two_steps.size(), 12u);
  for (std::size_t i = 0; i < one_steps.size(); ++i) {
    EXPECT_NEAR(two_steps[i].loss, one_steps[i].loss, 1e-5) << "step " << i + 1;
    EXPECT_EQ(two_steps[i].images, 64) << "a job's step rows count every rank's images";
  }
  EXPECT_NEAR(two->final_metrics.at("eval/loss"), one->final_metrics.at("eval/loss"), 1e-4);

  const auto one_weights = read_safetensors(newest_weights(dir.file("single"), 12));
  const auto two_weights = read_safetensors(newest_weights(dir.file("job"), 12));
  ASSERT_EQ(one_weights.tensors.size(), two_weights.tensors.size());
  for (std::size_t i = 0; i < one_weights.tensors.size(); ++i) {
    const auto& [name, tensor] = one_weights.tensors[i];
    ASSERT_EQ(two_weights.tensors[i].first, name);
    EXPECT_TRUE(at::allclose(two_weights.tensors[i].second, tensor, 1e-4, 1e-5)) << name;
  }

  const auto events = job_store.events(two->id);
  bool described = false;
  for (const auto& event : events)
    described |= event.kind == "data_parallel" && event.message.find("rank 0 of 2 (orchestrate launch, gloo)") == 0;
  EXPECT_TRUE(described) << "no data_parallel event";
}

}  // namespace
}  // namespace orchestrate::testing

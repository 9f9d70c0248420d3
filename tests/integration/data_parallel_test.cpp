// Data-parallel training end to end: `orchestrate run --nproc 2` on the real
// Fashion-MNIST against one process with the doubled batch.
#include <gtest/gtest.h>

#include <ATen/ops/allclose.h>

#include <cstdio>

#include "command_runner.h"
#include "run_store.h"
#include "safetensors.h"

namespace orchestrate::testing {
namespace {

// The tutorial's ConvNet (no dropout, no batch norm: nothing that depends on
// how a batch is split) with SGD momentum, whose update is linear in the
// gradient, so summation-order differences stay at float rounding (Adam
// divides tiny gradient components by their own magnitude and amplifies them).
const char* const kRecipe = R"(schema_version = 1
[run]
name = "dp_equivalence"
seed = 42
device = "cpu"
max_steps = 12
log_every = 5
num_workers = 0
[data]
plugin = "fashion_mnist"
limit = 2048
[model]
plugin = "convnet"
[optimizer]
plugin = "momentum"
lr = 0.05
momentum = 0.9
)";

struct Trained {
  std::vector<StepTiming> steps;           // the job's (rank 0's rows)
  std::vector<StepTiming> rank1_steps;     // empty for one process
  NamedTensors weights;                    // after the last step
  std::vector<EventRecord> events;
  std::string output;
};

Trained train(const ScratchDir& dir, const std::string& name, const std::string& options) {
  const std::string recipe = dir.write(name + ".toml", kRecipe);
  const auto result = run_orchestrate("run " + recipe + " " + options + " --set checkpoint.dir=" + dir.file(name) +
                                      " --db " + dir.file(name + ".db") + " --quiet");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  RunStore store(dir.file(name + ".db"));
  const auto run = store.find_run("dp_equivalence");
  if (!run) {
    ADD_FAILURE() << "no run recorded: " << result.output;
    return {};
  }
  Trained out{store.step_timings(run->id), store.step_timings(run->id, 1), {}, store.events(run->id), result.output};
  out.weights = read_safetensors(dir.file(name) + "/run-1/step-00000012/model.safetensors");
  return out;
}

void expect_same_steps(const Trained& job, const Trained& single) {
  ASSERT_EQ(single.steps.size(), 12u);
  ASSERT_EQ(job.steps.size(), 12u);
  for (std::size_t i = 0; i < single.steps.size(); ++i)
    EXPECT_NEAR(job.steps[i].loss, single.steps[i].loss, 1e-5) << "step " << i + 1;
  ASSERT_EQ(job.weights.tensors.size(), single.weights.tensors.size());
  for (std::size_t i = 0; i < single.weights.tensors.size(); ++i) {
    const auto& [name, tensor] = single.weights.tensors[i];
    ASSERT_EQ(job.weights.tensors[i].first, name);
    EXPECT_TRUE(at::allclose(job.weights.tensors[i].second, tensor, 1e-4, 1e-6))
        << name << ": max difference " << at::Tensor(job.weights.tensors[i].second.sub(tensor)).abs().max().template item<double>();
  }
}

// Synchronous data parallelism: 2 ranks with batch 32 each average their
// gradients into the update one process makes from the same 64 images (the
// ranks' shards are the two halves of its batch), so both take the same 12
// steps: the same losses and the same weights, up to float summation order.
TEST(DataParallel, TwoRanksTakeTheSameStepsAsOneProcessWithTheDoubledBatch) {
  ScratchDir dir;
  const auto single = train(dir, "single", "--set run.batch_size=64");
  const auto job = train(dir, "job", "--nproc 2 --set run.batch_size=32");
  expect_same_steps(job, single);
  EXPECT_NE(job.output.find("[rank 0] run 1 'dp_equivalence' finished after 12 steps"), std::string::npos)
      << job.output;

  // Rank 0's rows are the job's steps (both ranks' images); rank 1's its own.
  ASSERT_EQ(job.rank1_steps.size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(job.steps[i].images, 64);
    EXPECT_EQ(job.rank1_steps[i].images, 32);
    EXPECT_EQ(job.rank1_steps[i].rank, 1);
    EXPECT_EQ(job.rank1_steps[i].step, static_cast<std::int64_t>(i + 1));
  }
  bool described = false;
  for (const auto& event : job.events)
    described |= event.kind == "data_parallel" && event.message.find("rank 0 of 2 (orchestrate launch, gloo)") == 0;
  EXPECT_TRUE(described) << "no data_parallel event";
}

// With batch_gradients the ranks accumulate locally and all-reduce once per
// update: 2 ranks x 2 micro-batches of 16 are again one process's batch of 64.
TEST(DataParallel, AccumulatingRanksEqualOneProcessWithTheWholeBatch) {
  ScratchDir dir;
  const auto single = train(dir, "single", "--set run.batch_size=64");
  const auto job = train(dir, "job",
                         "--nproc 2 --set run.batch_size=16 --set 'optimizer.wrappers=[{plugin=\"batch_gradients\", "
                         "num_batches=2}]'");
  expect_same_steps(job, single);
}

}  // namespace
}  // namespace orchestrate::testing

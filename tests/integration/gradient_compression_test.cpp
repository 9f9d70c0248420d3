// Deep Gradient Compression end to end: `orchestrate run --nproc 2` with
// [gradient_compression] plugin = "dgc" on the real Fashion-MNIST.
#include <gtest/gtest.h>

#include <ATen/ops/allclose.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "checkpoint/safetensors.h"
#include "command_runner.h"
#include "store/run_store.h"

namespace orchestrate::testing {
namespace {

// The tutorial's ConvNet (no dropout, no batch norm) and plain SGD: DGC
// applies the momentum and the weight decay itself.
const char* const kRecipe = R"(schema_version = 1
[run]
name = "dgc"
seed = 42
device = "cpu"
max_steps = 12
log_every = 4
num_workers = 0
batch_size = 32
[data]
plugin = "fashion_mnist"
limit = 2048
[model]
plugin = "convnet"
[optimizer]
plugin = "sgd"
lr = 0.05
weight_decay = 0.0005
[gradient_compression]
plugin = "dgc"   # momentum 0.9 by default
)";

struct Trained {
  int exit_code = -1;
  std::string output;
  std::vector<StepTiming> steps;  // rank 0's rows
  std::vector<StepTiming> rank1_steps;
  std::map<std::string, double> metrics;
  std::vector<EventRecord> events;
  NamedTensors weights;  // the checkpoint at `checkpoint_step`
};

Trained train(const ScratchDir& dir, const std::string& name, const std::string& options,
              std::int64_t checkpoint_step = 12) {
  const std::string recipe = dir.write(name + ".toml", kRecipe);
  const auto result = run_orchestrate("run " + recipe + " " + options + " --set checkpoint.dir=" + dir.file(name) +
                                      " --db " + dir.file(name + ".db") + " --quiet");
  Trained out;
  out.exit_code = result.exit_code;
  out.output = result.output;
  if (result.exit_code != 0) return out;
  RunStore store(dir.file(name + ".db"));
  const auto run = store.find_run("dgc");
  if (!run) return out;
  out.steps = store.step_timings(run->id);
  out.rank1_steps = store.step_timings(run->id, 1);
  out.metrics = run->final_metrics;
  out.events = store.events(run->id);
  char step[32];
  std::snprintf(step, sizeof step, "step-%08lld", static_cast<long long>(checkpoint_step));
  out.weights = read_safetensors(dir.file(name) + "/run-1/" + step + "/model.safetensors");
  return out;
}

void expect_same_weights(const NamedTensors& a, const NamedTensors& b, double rtol, double atol) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(a.tensors[i].first, b.tensors[i].first);
    EXPECT_TRUE(at::allclose(a.tensors[i].second, b.tensors[i].second, rtol, atol))
        << a.tensors[i].first << ": max difference "
        << at::Tensor(a.tensors[i].second.sub(b.tensors[i].second)).abs().max().item<double>();
  }
}

// Sending everything without masking, DGC on 2 ranks is momentum SGD (weight
// decay inside) on one process with the doubled batch: the same 12 steps.
// Float rounding differs (momentum per rank, then the mean), and in this
// ConvNet a rounding-level change can flip a ReLU or a max-pool choice for
// one image, so the weights agree to 2e-4 rather than to rounding; with
// momentum factor masking (the default) they are measurably elsewhere.
TEST(GradientCompression, DgcSendingEverythingIsMomentumSgdOnTheWholeBatch) {
  ScratchDir dir;
  const auto single = train(dir, "single",
                            "--set run.batch_size=64 --set gradient_compression.plugin=none "
                            "--set optimizer.plugin=momentum --set optimizer.momentum=0.9");
  ASSERT_EQ(single.exit_code, 0) << single.output;
  const std::string everything = "--nproc 2 --set 'gradient_compression.sparsity=[0.0]'";
  const auto job = train(dir, "job", everything + " --set gradient_compression.momentum_factor_masking=false");
  ASSERT_EQ(job.exit_code, 0) << job.output;
  ASSERT_EQ(job.steps.size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) EXPECT_NEAR(job.steps[i].loss, single.steps[i].loss, 1e-4) << "step " << i + 1;
  expect_same_weights(job.weights, single.weights, 1e-3, 2e-4);

  const auto masked = train(dir, "masked", everything);
  ASSERT_EQ(masked.exit_code, 0) << masked.output;
  double largest = 0;
  for (std::size_t i = 0; i < single.weights.tensors.size(); ++i)
    largest = std::max(largest, at::Tensor(masked.weights.tensors[i].second.sub(single.weights.tensors[i].second))
                                    .abs().max().item<double>());
  EXPECT_GT(largest, 2e-3) << "masking every sent entry's momentum is plain SGD, not momentum SGD";
}

// At the final stage (99.9 %) each rank sends about 0.1 % of each weight
// matrix as (index, value) pairs, and the vectors whole: the bytes recorded
// per update fall by two orders of magnitude against the dense all-reduce.
TEST(GradientCompression, DgcRecordsTheBytesItSendsAndSendsFarFewer) {
  ScratchDir dir;
  const auto dense = train(dir, "dense", "--nproc 2 --set gradient_compression.plugin=none "
                                         "--set optimizer.plugin=momentum --set optimizer.momentum=0.9");
  ASSERT_EQ(dense.exit_code, 0) << dense.output;
  // 64 updates per epoch: a stage every 2 updates, so updates 9.. are at 99.9 %.
  const auto dgc = train(dir, "dgc", "--nproc 2 --set gradient_compression.epochs_per_stage=0.03125");
  ASSERT_EQ(dgc.exit_code, 0) << dgc.output;
  ASSERT_EQ(dgc.steps.size(), 12u);
  ASSERT_EQ(dgc.rank1_steps.size(), 12u);
  const double dense_bytes = static_cast<double>(dense.steps.back().bytes_sent);
  EXPECT_EQ(dense_bytes, 4.0 * 93322) << "the ConvNet's 93,322 float32 gradients";
  // Stage 1 (75 %): a quarter of the values, each with its index.
  EXPECT_NEAR(static_cast<double>(dgc.steps[0].bytes_sent) / dense_bytes, 0.5, 0.01);
  const double final_bytes = static_cast<double>(dgc.steps.back().bytes_sent);
  EXPECT_EQ(dgc.rank1_steps.back().bytes_sent, dgc.steps.back().bytes_sent) << "every rank sends as much";
  EXPECT_GT(dense_bytes / final_bytes, 100.0) << dense_bytes << " vs " << final_bytes;
  EXPECT_NEAR(dgc.metrics.at("train/dgc_sparsity"), 0.999, 1e-12);
  bool described = false;
  for (const auto& event : dgc.events)
    described |= event.kind == "data_parallel" &&
                 event.message.find("gradients compressed by dgc and exchanged by all-gather") != std::string::npos;
  EXPECT_TRUE(described);

  const auto report = run_orchestrate("report throughput --db " + dir.file("dgc.db"));
  EXPECT_NE(report.output.find("sent_mib_per_step"), std::string::npos) << report.output;
}

// Each rank's residuals and momentum are in the checkpoint: a job stopped
// after step 6 and resumed on 2 ranks ends where the uninterrupted job ends.
TEST(GradientCompression, DgcResumesWithEachRanksResiduals) {
  ScratchDir dir;
  const std::string options = "--nproc 2 --set 'gradient_compression.sparsity=[0.9]' --set checkpoint.every_steps=6";
  const auto whole = train(dir, "job", options);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  // The end checkpoint goes, so only the resumed job can write it again.
  std::filesystem::remove_all(dir.file("job") + "/run-1/step-00000012");
  const auto resumed = run_orchestrate("run " + dir.file("job.toml") + " " + options + " --set checkpoint.dir=" +
                                       dir.file("job") + " --db " + dir.file("job.db") + " --quiet --resume " +
                                       dir.file("job") + "/run-1/step-00000006");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  expect_same_weights(read_safetensors(dir.file("job") + "/run-1/step-00000012/model.safetensors"), whole.weights,
                      1e-6, 1e-8);
}

// DGC's momentum correction needs a base optimizer without momentum: the
// recipe is refused before any run is recorded, by --dry-run too.
TEST(GradientCompression, DgcOverAMomentumOptimizerIsARecipeError) {
  ScratchDir dir;
  const std::string recipe = dir.write("bad.toml", kRecipe);
  for (const std::string extra : {"", " --dry-run"}) {
    const auto result = run_orchestrate("run " + recipe + " --set optimizer.plugin=momentum --db " +
                                        dir.file("bad.db") + extra);
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_NE(result.output.find("[gradient_compression] dgc: momentum = 0.90 is applied here"), std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("set [optimizer] plugin = \"sgd\""), std::string::npos) << result.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("bad.db")) && RunStore(dir.file("bad.db")).find_run("dgc"));
}

}  // namespace
}  // namespace orchestrate::testing

// The verdict's rules on phase shares made up to sit on either side of each
// threshold; tests/integration/throughput_verdict_test.cpp checks it on real runs.
#include "analysis/bottleneck_verdict.h"

#include <gtest/gtest.h>

#include <string>

namespace orchestrate {
namespace {

ThroughputRow row_with(double data_wait, double compute, double sync, double optimizer, double eval_s = 0) {
  ThroughputRow row;
  row.run_id = 1;
  row.name = "r";
  row.device = "cpu";
  row.steps = 100;
  row.warmup_steps = 1;
  row.train_s = 100;
  row.eval_s = eval_s;
  row.median_step_s = 1;
  row.p95_step_s = 1.1;
  row.data_wait_share = data_wait;
  row.compute_share = compute;
  row.sync_share = sync;
  row.optimizer_share = optimizer;
  row.bytes_per_step = 8 << 20;
  return row;
}

RunFacts facts_with(std::map<std::string, std::string> params, int cores = 8) {
  RunFacts facts;
  facts.params = std::move(params);
  facts.cores = cores;
  return facts;
}

bool mentions(const Verdict& verdict, const std::string& text) {
  for (const auto& fix : verdict.fixes)
    if (fix.find(text) != std::string::npos) return true;
  return false;
}

TEST(BottleneckVerdict, ADataWaitOfAFifthIsInputBoundAndAsksForWorkersUpToTheCores) {
  const auto verdict = bottleneck_verdict(row_with(0.6, 0.3, 0, 0.05), facts_with({{"run.num_workers", "0"}}));
  EXPECT_EQ(verdict.limit, "input");
  EXPECT_NEAR(verdict.input_share, 0.6, 1e-9);
  EXPECT_NE(verdict.evidence.find("60 %"), std::string::npos) << verdict.evidence;
  ASSERT_FALSE(verdict.fixes.empty());
  EXPECT_EQ(verdict.fixes.front().rfind("[run] num_workers = 8 (now 0", 0), 0u) << verdict.fixes.front();
  EXPECT_TRUE(mentions(verdict, "[run] cache_mb = "));
  // With every core already a worker, the next fixes come first.
  const auto saturated = bottleneck_verdict(row_with(0.6, 0.3, 0, 0.05),
                                            facts_with({{"run.num_workers", "8"}, {"run.cache_mb", "0"}}));
  EXPECT_EQ(saturated.fixes.front().rfind("[run] cache_mb", 0), 0u) << saturated.fixes.front();
  EXPECT_EQ(bottleneck_verdict(row_with(0.19, 0.75, 0, 0.05), facts_with({})).limit, "compute");
}

// The ConvNet at batch 128 on an H200, as measured there: 40,803 images/s,
// 3.1 ms a step, 0.0168 GFLOP an image against a 760 TFLOP/s peak.
ThroughputRow small_gpu_step() {
  ThroughputRow row = row_with(0.18, 0.77, 0, 0.05);
  row.device = "cuda:0";
  row.median_step_s = 0.0031;
  row.images_per_s = 40803;
  row.flops_per_image = 0.0168e9;
  row.peak_flops_per_s = 760e12;
  return row;
}

TEST(BottleneckVerdict, ATinyShareOfTheGpusPeakInAShortStepIsLaunchBoundAndAsksForALargerBatch) {
  const auto verdict = bottleneck_verdict(small_gpu_step(), facts_with({{"run.batch_size", "128"},
                                                                        {"precision.mode", "\"fp32\""}}));
  EXPECT_EQ(verdict.limit, "launch");
  EXPECT_NE(verdict.evidence.find("waits on kernel launches and the host"), std::string::npos) << verdict.evidence;
  EXPECT_NE(verdict.evidence.find("of its 3.10 ms"), std::string::npos) << verdict.evidence;
  ASSERT_FALSE(verdict.fixes.empty());
  EXPECT_EQ(verdict.fixes.front().rfind("[run] batch_size = 512 (now 128", 0), 0u) << verdict.fixes.front();
  EXPECT_FALSE(mentions(verdict, "bf16")) << "a faster precision does not shorten launches";

  // ResNet-50 fp16 at batch 256 on the same GPU: 44 ms at 19 %, arithmetic-bound.
  ThroughputRow resnet = small_gpu_step();
  resnet.median_step_s = 0.044;
  resnet.images_per_s = 5853;
  resnet.flops_per_image = 24.7e9;
  EXPECT_EQ(bottleneck_verdict(resnet, facts_with({})).limit, "compute");
  // A long step at a low share is not launches (a memory-bound model), nor is a CPU's.
  ThroughputRow long_step = small_gpu_step();
  long_step.median_step_s = 0.5;
  EXPECT_EQ(bottleneck_verdict(long_step, facts_with({})).limit, "compute");
  ThroughputRow cpu = small_gpu_step();
  cpu.device = "cpu";
  EXPECT_EQ(bottleneck_verdict(cpu, facts_with({})).limit, "compute");
}

// Where the run measured how much of its time the GPU ran kernels (NVML),
// that decides, not the inference from the arithmetic and the step's length.
TEST(BottleneckVerdict, AMeasuredIdleGpuIsLaunchBoundAndABusyOneIsNot) {
  ThroughputRow idle = small_gpu_step();
  idle.median_step_s = 0.5;  // too long a step for the inference to call it launch-bound
  idle.device_busy_share = 0.38;
  const auto verdict = bottleneck_verdict(idle, facts_with({{"run.batch_size", "128"}}));
  EXPECT_EQ(verdict.limit, "launch");
  EXPECT_EQ(verdict.evidence.rfind("the GPU ran kernels only 38 % of the training steps' time (NVML), at a model "
                                   "FLOPs utilisation of ",
                                   0),
            0u)
      << verdict.evidence;
  EXPECT_NE(verdict.evidence.find("waits on kernel launches and the host"), std::string::npos) << verdict.evidence;
  EXPECT_TRUE(mentions(verdict, "[run] batch_size = 512 (now 128"));

  ThroughputRow busy = small_gpu_step();  // what the inference alone calls launch-bound
  busy.device_busy_share = 0.97;
  const auto compute = bottleneck_verdict(busy, facts_with({}));
  EXPECT_EQ(compute.limit, "compute");
  EXPECT_NE(compute.evidence.find("; the GPU ran kernels 97 % of the training steps' time (NVML)"), std::string::npos)
      << compute.evidence;

  ThroughputRow cpu = row_with(0.05, 0.9, 0, 0.05);
  cpu.device_busy_share = 0.1;  // a CPU run never has it; if it did, it would not make the CPU launch-bound
  EXPECT_EQ(bottleneck_verdict(cpu, facts_with({})).limit, "compute");
}

TEST(BottleneckVerdict, SyncIsCommunicationBoundWithTheBucketAndCompressionFixes) {
  const auto verdict = bottleneck_verdict(
      row_with(0.05, 0.3, 0.6, 0.05),
      facts_with({{"distributed.bucket_size_mb", "0.01"}, {"gradient_compression.plugin", "\"none\""},
                  {"run.batch_size", "32"}}));
  EXPECT_EQ(verdict.limit, "communication");
  EXPECT_NE(verdict.evidence.find("8.00 MiB sent per update"), std::string::npos) << verdict.evidence;
  ASSERT_EQ(verdict.fixes.size(), 3u);
  EXPECT_EQ(verdict.fixes[0].rfind("[distributed] bucket_size_mb = 25 (now 0.010", 0), 0u) << verdict.fixes[0];
  EXPECT_EQ(verdict.fixes[1].rfind("[gradient_compression] plugin = \"dgc\"", 0), 0u) << verdict.fixes[1];
  EXPECT_EQ(verdict.fixes[2].rfind("[run] batch_size = 64 (now 32", 0), 0u) << verdict.fixes[2];
}

TEST(BottleneckVerdict, EvaluationAndTimeBetweenPhasesAreOverhead) {
  // Steps fully in their phases, but evaluation as long as the steps.
  const auto eval_heavy = bottleneck_verdict(row_with(0.05, 0.9, 0, 0.05, /*eval_s=*/100),
                                             facts_with({{"eval.every_epochs", "1"}, {"run.epochs", "8"}}));
  EXPECT_EQ(eval_heavy.limit, "overhead");
  EXPECT_NEAR(eval_heavy.overhead_share, 0.5, 1e-9);
  EXPECT_EQ(eval_heavy.fixes.front().rfind("[eval] every_epochs = 2 (now 1", 0), 0u) << eval_heavy.fixes.front();
  // A third of each step outside the phases, logging every step.
  const auto logging = bottleneck_verdict(row_with(0.05, 0.55, 0, 0.05), facts_with({{"run.log_every", "1"}}));
  EXPECT_EQ(logging.limit, "overhead");
  EXPECT_TRUE(mentions(logging, "[run] log_every = 50 (now 1)"));
}

// A run that evaluates once, at its end, gains nothing from evaluating less
// often: one epoch, or capped by max_steps (a 100-step run).
TEST(BottleneckVerdict, AShortRunIsNotToldToEvaluateLessOften) {
  for (const auto& params : {std::map<std::string, std::string>{{"run.epochs", "1"}},
                             std::map<std::string, std::string>{{"run.epochs", "8"}, {"run.max_steps", "100"}},
                             std::map<std::string, std::string>{{"run.epochs", "2"}, {"eval.every_epochs", "2"}}}) {
    const auto verdict = bottleneck_verdict(row_with(0.05, 0.9, 0, 0.05, /*eval_s=*/100), facts_with(params));
    EXPECT_EQ(verdict.limit, "overhead");
    EXPECT_FALSE(mentions(verdict, "every_epochs = ")) << verdict.fixes.front();
    EXPECT_EQ(verdict.fixes.front().rfind("[eval] enabled = false for a run that times training (now true; evaluation "
                                          "took 50 % of the training time, but this run evaluates once", 0),
              0u)
        << verdict.fixes.front();
  }
}

// A smoke run sets one thread and fp32 on purpose; a verdict would tell the
// user to undo them. A run of 10 steps or fewer keeps its first step, whose
// autotuning on a GPU takes seconds and would pass for a slow step.
TEST(BottleneckVerdict, ASmokeRunAndARunTooShortToLeaveOutItsFirstStepAreNotJudged) {
  auto smoke = facts_with({{"run.threads", "1"}}, /*cores=*/2);
  smoke.smoke = true;
  const auto smoke_verdict = bottleneck_verdict(row_with(0.05, 0.9, 0, 0.05), smoke);
  EXPECT_EQ(smoke_verdict.limit, "");
  EXPECT_TRUE(smoke_verdict.fixes.empty());
  EXPECT_EQ(smoke_verdict.not_judged.rfind("a smoke run (", 0), 0u) << smoke_verdict.not_judged;

  auto short_run = row_with(0.05, 0.9, 0, 0.05);
  short_run.steps = 10;
  short_run.warmup_steps = 0;
  const auto short_verdict = bottleneck_verdict(short_run, facts_with({}));
  EXPECT_EQ(short_verdict.limit, "");
  EXPECT_TRUE(short_verdict.fixes.empty());
  EXPECT_EQ(short_verdict.not_judged.rfind("10 steps, too few to leave out the first", 0), 0u);
  EXPECT_NE(short_verdict.not_judged.find("needs " + std::to_string(kMinStepsToDropWarmUp) + " steps"),
            std::string::npos)
      << short_verdict.not_judged;

  const auto judged = bottleneck_verdict(row_with(0.05, 0.9, 0, 0.05), facts_with({}));
  EXPECT_EQ(judged.limit, "compute");
  EXPECT_EQ(judged.not_judged, "");
}

TEST(BottleneckVerdict, ComputeBoundOnCudaInFp32AsksForBf16) {
  auto row = row_with(0.02, 0.9, 0, 0.08);
  row.device = "cuda:0";
  const auto verdict = bottleneck_verdict(row, facts_with({{"precision.mode", "\"fp32\""}}));
  EXPECT_EQ(verdict.limit, "compute");
  EXPECT_EQ(verdict.fixes.front().rfind("[precision] mode = \"bf16\"", 0), 0u) << verdict.fixes.front();
  ThroughputRow nothing;
  EXPECT_EQ(bottleneck_verdict(nothing, facts_with({})).limit, "");
}

// On a CPU whose bf16 products are ten times its fp16 ones (a Zen 4 EPYC:
// oneDNN's bf16 kernels, no fp16 units), an fp16 run is told to try bf16;
// a precision under twice as fast is not worth a line.
TEST(BottleneckVerdict, ACpuWhoseOtherPrecisionMultipliesTwiceAsFastAsksForIt) {
  auto row = row_with(0.02, 0.9, 0, 0.08);
  row.peak_flops_per_s = 43.3e9;
  auto facts = facts_with({{"precision.mode", "\"fp16\""}}, /*cores=*/2);
  facts.other_precision_peaks = {{"bf16", 421.1e9}, {"fp32", 202.1e9}};
  const auto verdict = bottleneck_verdict(row, facts);
  EXPECT_EQ(verdict.limit, "compute");
  ASSERT_FALSE(verdict.fixes.empty());
  EXPECT_EQ(verdict.fixes.front(), "[precision] mode = \"bf16\" (now fp16: this CPU's bf16 matrix products reach "
                                   "421 GFLOP/s, 9.7 times fp16's 43.3 GFLOP/s)");

  row.peak_flops_per_s = 300e9;
  EXPECT_TRUE(mentions(bottleneck_verdict(row, facts), "none in the recipe")) << "421 is not twice 300";
  row.device = "cuda:0";
  row.peak_flops_per_s = 43.3e9;
  EXPECT_FALSE(mentions(bottleneck_verdict(row, facts), "this CPU's")) << "a GPU's precisions are another matter";
}

TEST(BottleneckVerdict, AStragglerIsTheRankBusyLongestBeyondATenthOverTheOthers) {
  std::vector<ThroughputRow> ranks(4, row_with(0.1, 0.5, 0.3, 0.1));
  ranks[0].rank = "job";
  ranks[1].rank = "1";
  ranks[2].rank = "2";
  ranks[3].rank = "3";
  EXPECT_FALSE(find_straggler(ranks).has_value());
  ranks[2].sync_share = 0.05;  // the others wait for rank 2 in their sync
  const auto straggler = find_straggler(ranks);
  ASSERT_TRUE(straggler.has_value());
  EXPECT_EQ(straggler->rank, "2");
  EXPECT_NEAR(straggler->busy_s, 0.95, 1e-9);
  EXPECT_NEAR(straggler->others_busy_s, 0.7, 1e-9);
}

}  // namespace
}  // namespace orchestrate

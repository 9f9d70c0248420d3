// What CUDA graph capture decides without a GPU: whether it may capture and,
// when it may not, the one event that says why. The capture and replay
// themselves need a GPU: scripts/bench/cuda_graph_checks.py (gpu_checks graph).
#include "engine/train/cuda_graph_step.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "store/run_store_test_support.h"

namespace orchestrate {
namespace {

const c10::Device kGpu(c10::kCUDA, 0);  // named only: nothing here touches a device

std::vector<EventRecord> graph_events(testing::ScratchRun& run) { return run.events_of("cuda_graph"); }

TEST(CudaGraphStep, ARunThatCannotBeCapturedSaysWhyOnceAndNamesTheWayToSilenceIt) {
  testing::ScratchRun run;
  const CudaGraphStep step(CudaGraphMode::automatic, kGpu, {}, 1,
                           "a data-parallel job all-reduces its gradients during backward", run.recorder);
  EXPECT_FALSE(step.replaying());
  const auto events = graph_events(run);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].message,
            "the eager step runs: a data-parallel job all-reduces its gradients during backward (set [run] "
            "cuda_graph = \"off\" to silence this)");
}

TEST(CudaGraphStep, OffOrOnTheCpuItSaysNothing) {
  testing::ScratchRun run;
  const CudaGraphStep off(CudaGraphMode::off, kGpu, {}, 1, "a data-parallel job", run.recorder);
  const CudaGraphStep cpu(CudaGraphMode::automatic, c10::Device(c10::kCPU), {}, 1, "a data-parallel job",
                          run.recorder);
  EXPECT_TRUE(graph_events(run).empty());
}

// On the CPU every micro-batch runs the body itself, however many there are.
TEST(CudaGraphStep, OnTheCpuEveryMicroBatchRunsEagerly) {
  testing::ScratchRun run;
  auto weight = at::ones({3}).requires_grad_();
  CudaGraphStep step(CudaGraphMode::automatic, c10::Device(c10::kCPU), {weight}, 1, "", run.recorder);
  int calls = 0;
  const CudaGraphStep::Body body = [&](const at::Tensor& x, const at::Tensor&, std::string&) {
    ++calls;
    auto loss = (weight * x).sum();
    loss.backward();
    return CudaGraphStep::Result{loss.detach(), x};
  };
  for (std::int64_t update = 1; update <= kEagerUpdatesBeforeCapture + 3; ++update) {
    const auto result = step.run(at::full({3}, 2.0), at::zeros({1}, at::kLong), update, body);
    EXPECT_DOUBLE_EQ(result.loss.item<double>(), 6.0);
  }
  EXPECT_EQ(calls, kEagerUpdatesBeforeCapture + 3);
  EXPECT_FALSE(step.replaying());
  EXPECT_TRUE(weight.grad().equal(at::full({3}, 2.0 * (kEagerUpdatesBeforeCapture + 3))))
      << "the step leaves the gradients to backward and the update step";
  EXPECT_TRUE(graph_events(run).empty());
}

// An auxiliary classifier's loss is logged at every step, which a replay
// would not do: the eager updates before the capture find that out, and the
// run never tries to capture. (Tensors on the CPU: the eager updates are all
// this test reaches, so no GPU is needed.)
TEST(CudaGraphStep, WhatTheEagerUpdatesFindUncapturableIsNeverCaptured) {
  testing::ScratchRun run;
  auto weight = at::ones({3}).requires_grad_();
  CudaGraphStep step(CudaGraphMode::automatic, kGpu, {weight}, 1, "", run.recorder);
  EXPECT_TRUE(graph_events(run).empty()) << "nothing is decided before the first update";
  int calls = 0;
  const CudaGraphStep::Body body = [&](const at::Tensor& x, const at::Tensor&, std::string& not_capturable) {
    ++calls;
    not_capturable = "the model's auxiliary classifiers log their losses at every step";
    auto loss = (weight * x).sum();
    loss.backward();
    return CudaGraphStep::Result{loss.detach(), x};
  };
  for (std::int64_t update = 1; update <= kEagerUpdatesBeforeCapture + 2; ++update)
    step.run(at::full({3}, 2.0), at::zeros({1}, at::kLong), update, body);
  EXPECT_EQ(calls, kEagerUpdatesBeforeCapture + 2);
  EXPECT_FALSE(step.replaying());
  const auto events = graph_events(run);
  ASSERT_EQ(events.size(), 1U) << "said once, not at every update";
  EXPECT_EQ(events[0].message, "the eager step runs: the model's auxiliary classifiers log their losses at every step");
}

}  // namespace
}  // namespace orchestrate

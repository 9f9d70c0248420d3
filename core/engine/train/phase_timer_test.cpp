#include "engine/train/phase_timer.h"

#include <gtest/gtest.h>

#include <thread>

namespace orchestrate {
namespace {

void wait_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// On the host every closed step is ready at once, with its micro-batches' compute summed.
TEST(PhaseTimer, HostStepsSumComputeOverMicroBatchesAndTimeTheOptimizer) {
  PhaseTimer timer{c10::Device(c10::kCPU)};
  for (int micro = 0; micro < 2; ++micro) {
    timer.compute_begins();
    wait_ms(20);
    timer.compute_ends();
    wait_ms(5);  // data wait between micro-batches is not compute
  }
  wait_ms(10);
  timer.optimizer_ends();
  timer.compute_begins();
  timer.compute_ends();
  timer.optimizer_ends();
  const auto steps = timer.take(/*wait=*/false);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_GE(steps[0].compute_s, 0.040);
  EXPECT_LT(steps[0].compute_s, 0.049);
  EXPECT_GE(steps[0].optimizer_s, 0.015);  // from the last compute end: 5 + 10 ms
  EXPECT_LT(steps[1].compute_s, 0.005);
  EXPECT_TRUE(timer.take(false).empty());
}

}  // namespace
}  // namespace orchestrate

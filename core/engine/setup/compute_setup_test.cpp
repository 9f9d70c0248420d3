#include "engine/setup/compute_setup.h"

#include <ATen/Context.h>
#include <gtest/gtest.h>

namespace orchestrate {
namespace {

// [run] cudnn_benchmark_limit only changes how long CUDA's first steps
// autotune, which no CPU can show; what a CPU can show is that the recipe's
// value, not LibTorch's default of 10, is what cuDNN's search will read.
TEST(ComputeSetup, TheRecipesCudnnBenchmarkLimitIsLibTorchs) {
  Settings settings;
  settings.run.device = "cpu";
  for (const int limit : {3, 0, 10}) {
    settings.run.cudnn_benchmark_limit = limit;
    set_up_compute(settings);
    EXPECT_EQ(at::globalContext().benchmarkLimitCuDNN(), limit);
  }
}

}  // namespace
}  // namespace orchestrate

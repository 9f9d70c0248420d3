#include "engine/setup/matmul_peak.h"

#include <gtest/gtest.h>

#include <ATen/Parallel.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "engine/recipe/usable_cores.h"

namespace orchestrate {
namespace {

TEST(MatmulPeak, TheCpuPeakIsARealRateOfTheProcesssThreads) {
  const MeasuredPeak peak = measure_matmul_peak(c10::Device(c10::kCPU), PrecisionMode::fp32);
  // Any CPU this builds on multiplies faster than 1 GFLOP/s, and none of a
  // test machine's size reaches 10 TFLOP/s.
  EXPECT_GT(peak.flops_per_s, 1e9);
  EXPECT_LT(peak.flops_per_s, 1e13);
  // The side doubles from 256 until a product takes 10 ms, up to 1024.
  EXPECT_NE(peak.method.find(" fp32 matmul, " + std::to_string(at::get_num_threads()) + " threads, best of "),
            std::string::npos)
      << peak.method;
  EXPECT_NE(device_model_name(c10::Device(c10::kCPU)), "");
}

// Another program on every core takes time from the products' threads: the
// measurement says so (cpu_share), and is marked disturbed, so that its low
// figure is measured again later (device_peak_cache.h). One spinning process
// per usable core leaves the threads at most about half of their time, and
// other tests running beside this one only lower it further. (The other way,
// that an idle machine is not marked, cannot be asserted under a parallel
// ctest; benchmarks.md has the figures.)
TEST(MatmulPeak, AMeasurementBesideBusyProcessesIsMarkedDisturbed) {
  std::vector<pid_t> spinners;
  for (int core = 0; core < usable_cores(); ++core) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
      for (volatile unsigned long spin = 0;; spin = spin + 1) {
      }
    spinners.push_back(pid);
  }
  const MeasuredPeak peak = measure_matmul_peak(c10::Device(c10::kCPU), PrecisionMode::fp32);
  for (const pid_t pid : spinners) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  EXPECT_LT(peak.cpu_share, kLeastUndisturbedCpuShare) << peak.method;
  EXPECT_GT(peak.cpu_share, 0.05) << "the threads ran some of the time";
  EXPECT_TRUE(peak.disturbed());
  const MeasuredPeak on_a_gpu_is_never_marked;
  EXPECT_FALSE(on_a_gpu_is_never_marked.disturbed());
}

TEST(MatmulPeak, ASlowPrecisionIsTimedOnSmallerMatrices) {
  // bf16 products on a CPU without bf16 units run under 1 GFLOP/s: at
  // 1024 x 1024 each would take seconds.
  const MeasuredPeak peak = measure_matmul_peak(c10::Device(c10::kCPU), PrecisionMode::bf16);
  EXPECT_GT(peak.flops_per_s, 0);
  EXPECT_NE(peak.method.find(" bf16 matmul"), std::string::npos) << peak.method;
}

TEST(MatmulPeak, DatasheetFiguresAreDenseAndTellTheH100sApart) {
  EXPECT_EQ(datasheet_peak_flops("NVIDIA H100 80GB HBM3", PrecisionMode::bf16), 989e12);
  EXPECT_EQ(datasheet_peak_flops("NVIDIA H100 PCIe", PrecisionMode::fp16), 756e12);
  EXPECT_EQ(datasheet_peak_flops("NVIDIA H100 80GB HBM3", PrecisionMode::fp32), 495e12);  // TF32
  EXPECT_EQ(datasheet_peak_flops("NVIDIA H200", PrecisionMode::fp16), 989e12);
  EXPECT_EQ(datasheet_peak_flops("NVIDIA A100-SXM4-80GB", PrecisionMode::bf16), 312e12);
  EXPECT_EQ(datasheet_peak_flops("NVIDIA L4", PrecisionMode::fp16), 121e12);
  EXPECT_EQ(datasheet_peak_flops("NVIDIA L40S", PrecisionMode::fp16), 362e12);
  EXPECT_FALSE(datasheet_peak_flops("AMD EPYC 7B13", PrecisionMode::fp32));
}

}  // namespace
}  // namespace orchestrate

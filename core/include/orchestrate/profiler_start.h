// Starts LibTorch's (Kineto) profiler: for the profile hook, and for the
// FLOP count of model_flops.h.
#pragma once

#include <torch/csrc/autograd/profiler_kineto.h>

#include <cstdlib>
#include <set>

namespace orchestrate {

// On a machine without a GPU, the CUDA build's Kineto logs
// "ERROR: ... gpuGetDeviceCount failed with code 35" when it starts, which
// reads like a failure of the run. For a CPU-only profile its errors are
// silenced unless the user chose a level (KINETO_LOG_LEVEL); whether the trace
// was written is checked by the hook itself.
inline void start_profiler(const torch::profiler::impl::ProfilerConfig& config,
                           const std::set<torch::profiler::impl::ActivityType>& activities) {
  if (!activities.count(torch::profiler::impl::ActivityType::CUDA)) setenv("KINETO_LOG_LEVEL", "5", /*overwrite=*/0);
  torch::autograd::profiler::prepareProfiler(config, activities);
  torch::autograd::profiler::enableProfiler(config, activities);
}

}  // namespace orchestrate

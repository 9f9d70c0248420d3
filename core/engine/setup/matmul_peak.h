// What this machine's device can compute: the measured peak of its matrix
// products, and a GPU's datasheet figure beside it. A run's model FLOPs
// utilisation (`report throughput`'s mfu_percent) is its achieved FLOP/s
// over the measured peak, which is what a model can reach here, not what a
// brochure promises.
#pragma once

#include <c10/core/Device.h>

#include <optional>
#include <string>

#include "engine/precision/precision_mode.h"

namespace orchestrate {

struct MeasuredPeak {
  double flops_per_s = 0;
  std::string method;  // what was timed: "1024x1024 fp32 matmul, 2 threads, best of 14"
};

// Times square matrix products in `mode`'s dtype on `device` (fp32 with
// TF32 where the setup allows it on CUDA), with the process's intra-op
// threads, for about a second (at least 5 products, at most 80), and
// returns the best rate: a host measures it once (utilisation_baseline.h),
// so it is worth the time that lets a clean sample through a busy moment.
// The side is the largest up to 1024 (CPU) or 8192 (GPU) reached by
// doubling from 256 while one product takes under 10 ms.
MeasuredPeak measure_matmul_peak(const c10::Device& device, PrecisionMode mode);

// The device's model name: the CPU's from /proc/cpuinfo, the GPU's from
// CUDA; "cpu" or "cuda" when it cannot be read.
std::string device_model_name(const c10::Device& device);

// A GPU's dense datasheet peak (no sparsity) for `mode`, fp32 meaning TF32
// tensor cores as the setup enables them; none for a GPU not listed.
std::optional<double> datasheet_peak_flops(const std::string& gpu_name, PrecisionMode mode);

}  // namespace orchestrate

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

// Below this share of its threads' time (cpu_share), a CPU measurement is
// taken to have shared the cores with other work.
inline constexpr double kLeastUndisturbedCpuShare = 0.8;

struct MeasuredPeak {
  double flops_per_s = 0;
  // What was timed: "1024x1024 fp16 products by linear, the faster of mm
  // and linear, 2 threads, best of 14".
  std::string method;
  // On a CPU: the process's CPU time over the products' wall time times the
  // threads that could run (the intra-op threads, at most the usable cores),
  // over the whole measurement. Another process on the cores takes time from
  // the product's threads and lowers it. Not of the best product alone:
  // Linux folds the other threads' time into the process clock late, so a
  // product of a millisecond read 50 % beside a 201 GFLOP/s rate. Measured
  // on the 2-core EPYC: 0.95 to 0.99 idle, about 0.5 beside a busy process,
  // whose best product can still be a clean figure (then marked all the same).
  // 1 on a GPU.
  double cpu_share = 1;
  bool disturbed() const { return cpu_share < kLeastUndisturbedCpuShare; }
};

// In every method this version measures by: the peak is the faster of
// at::mm and at::linear, which ATen may send to different libraries. A kept
// peak without it was timed by mm alone (device_peak_cache.h measures it again).
inline constexpr const char* kFasterOfBothProducts = "the faster of mm and linear";

// Times square matrix products in `mode`'s dtype on `device` (fp32 with
// TF32 where the setup allows it on CUDA), by mm or linear, whichever is
// faster here, with the process's intra-op
// threads, for about a second (at least 5 products, at most 80), and
// returns the best rate: a host measures it once (utilisation_baseline.h),
// so it is worth the time that lets a clean sample through a busy moment;
// cpu_share says whether the cores were its own.
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

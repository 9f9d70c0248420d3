#include "engine/setup/compute_setup.h"

#include "engine/recipe/usable_cores.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/cuda/CUDAFunctions.h>

#include <algorithm>
#include <thread>

#include "engine/precision/autocast_scope.h"
#include "engine/setup/device.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// Intra-op threads: the recipe's, or one per core. Measured on the 2-core
// CI machine (Fashion-MNIST ConvNet, batch 128, 2 data workers): 2 threads
// gave 2165-2250 img/s, 1 thread 1120-1500; the data workers mostly wait on
// a full prefetch queue, so they take little from the compute threads.
// CPU workers of one machine share its cores (--nproc 2 on 2 cores: one each).
int intra_op_threads(const RunSettings& run, int workers_on_this_machine) {
  if (run.threads > 0) return run.threads;
  return std::max(1, usable_cores() / std::max(1, workers_on_this_machine));
}

// auto is channels-last on CUDA only. On the CPU it depends on the model:
// measured on the 2-core AMD EPYC (Zen 3, AVX2), the Fashion-MNIST ConvNet's
// step went from 48 ms NCHW to 33 ms channels-last (ATen vectorises max
// pooling only for channels-last), while ResNet-18's at 32x32, batch 16,
// went from 0.09-0.11 s to 0.13 s. So a recipe asks for it (the ConvNet
// recipes do).
bool use_channels_last(MemoryFormat format, const c10::Device& device) {
  return format == MemoryFormat::channels_last || (format == MemoryFormat::automatic && device.is_cuda());
}

// Speedups that only the device decides: cuDNN autotuning (unless the
// recipe turns it off) and TF32 matmuls on CUDA. The worker's GPU becomes
// the current device, as torchrun scripts' torch.cuda.set_device(local_rank)
// does: a CUDA call that names no device (a device-wide synchronisation, a
// stream from the pool) then reaches this rank's GPU, not GPU 0.
void configure_device(const c10::Device& device, const RunSettings& run) {
  // Set on every device, though only CUDA convolutions read it, so a CPU
  // test sees the recipe's limit reach LibTorch.
  at::globalContext().setBenchmarkLimitCuDNN(run.cudnn_benchmark_limit);
  if (!device.is_cuda()) return;
  if (device.has_index()) c10::cuda::set_device(device.index());
  at::globalContext().setBenchmarkCuDNN(run.cudnn_benchmark);
  at::globalContext().setAllowTF32CuBLAS(true);
  at::globalContext().setAllowTF32CuDNN(true);
}

}  // namespace

ComputeSetup set_up_compute(const Settings& s, const LaunchEnvironment& job) {
  ComputeSetup compute;
  compute.world_size = job.world_size;
  compute.rank = job.rank;
  compute.intra_op_threads = intra_op_threads(s.run, job.local_world_size);
  at::set_num_threads(compute.intra_op_threads);
  compute.device = training_device(s, job);
  if (auto why = AutocastScope::unsupported_reason(compute.device.type(), s.precision.mode))
    throw RecipeError("[precision] mode = \"" + std::string(precision_mode_name(s.precision.mode)) + "\": " + *why);
  configure_device(compute.device, s.run);
  compute.channels_last = use_channels_last(s.memory_format, compute.device);
  compute.pipeline.workers = s.run.num_workers;
  compute.pipeline.prefetch = s.run.prefetch_batches;
  compute.pipeline.pin_memory = compute.device.is_cuda();
  compute.pipeline.finish_on_host = compute.device.is_cpu();
  compute.pipeline.cache_bytes = static_cast<std::size_t>(s.run.cache_mb) << 20;
  // Seeded before any component exists, so weight init and augmentation are reproducible.
  at::manual_seed(s.run.seed);
  return compute;
}

c10::Device training_device(const Settings& s, const LaunchEnvironment& job) {
  const c10::Device device = select_device(s.run.device);
  if (device.is_cuda() && job.distributed()) return worker_cuda_device(job.local_rank, job.local_world_size);
  return device;
}

void apply_memory_format(torch::nn::Module& model, const ComputeSetup& compute) {
  if (!compute.channels_last) return;
  // Copied into channels-last strides rather than by contiguous(ChannelsLast):
  // a weight with one input channel ([32, 1, 3, 3], a grayscale model's first
  // conv) already counts as channels-last contiguous and would keep its NCHW
  // strides, so oneDNN would run that conv, and the pooling after it, as
  // NCHW, converting back at the next layer (measured: the scalar NCHW max
  // pool and the conversions took a fifth of the ConvNet's CPU step).
  for (auto& parameter : model.parameters())
    if (parameter.dim() == 4)
      parameter.set_data(at::empty_like(parameter, at::MemoryFormat::ChannelsLast).copy_(parameter));
}

}  // namespace orchestrate

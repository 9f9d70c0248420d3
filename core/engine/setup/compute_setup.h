// How a run uses this machine: device, threads, memory format and data
// pipeline, decided once from the recipe before anything is built. Training
// and `orchestrate eval` both start here, so an evaluation of a checkpoint
// computes exactly as the training run's own evaluation did.
#pragma once

#include <c10/core/Device.h>
#include <torch/nn/module.h>

#include "distributed/launch_environment.h"
#include "engine/input/batch_pipeline.h"
#include "engine/recipe/settings.h"

namespace orchestrate {

struct ComputeSetup {
  c10::Device device{c10::kCPU};
  int intra_op_threads = 1;
  bool channels_last = false;  // images and 4-d weights in channels_last ([model] memory_format)
  PipelineOptions pipeline;    // [run] num_workers, prefetch_batches and cache_mb; pinned memory on CUDA
  // This process's place in a data-parallel job (1 and 0 alone): each rank
  // trains [run] batch_size images of every global batch of world_size x batch_size.
  int world_size = 1;
  int rank = 0;
};

// Selects [run] device and sets the process's intra-op threads ([run]
// threads, or one per core); refuses a [precision] mode the device cannot
// run (RecipeError); switches on the speedups only the device decides
// (cuDNN autotuning, TF32 on CUDA); and seeds the default generators with
// [run] seed, so whatever is built next (weights, augmentation) is
// reproducible. Process-wide: call it once, before building components.
// In a data-parallel job each rank takes the CUDA device of its local rank.
ComputeSetup set_up_compute(const Settings& settings, const LaunchEnvironment& job = {});

// The device [run] device selects, on CUDA the GPU of this rank's local rank.
c10::Device training_device(const Settings& settings, const LaunchEnvironment& job = {});

// Puts the model's 4-d weights in channels_last when the setup asks for it.
void apply_memory_format(torch::nn::Module& model, const ComputeSetup& compute);

}  // namespace orchestrate

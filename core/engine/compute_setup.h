// How a run uses this machine: device, threads, memory format and data
// pipeline, decided once from the recipe before anything is built. Training
// and `orchestrate eval` both start here, so an evaluation of a checkpoint
// computes exactly as the training run's own evaluation did.
#pragma once

#include <c10/core/Device.h>
#include <torch/nn/module.h>

#include "batch_pipeline.h"
#include "settings.h"

namespace orchestrate {

struct ComputeSetup {
  c10::Device device{c10::kCPU};
  int intra_op_threads = 1;
  bool channels_last = false;  // images and 4-d weights in channels_last ([model] memory_format)
  PipelineOptions pipeline;    // [run] num_workers and prefetch_batches; pinned memory on CUDA
};

// Selects [run] device and sets the process's intra-op threads ([run]
// threads, or one per core); refuses a [precision] mode the device cannot
// run (RecipeError); switches on the speedups only the device decides
// (cuDNN autotuning, TF32 on CUDA); and seeds the default generators with
// [run] seed, so whatever is built next (weights, augmentation) is
// reproducible. Process-wide: call it once, before building components.
ComputeSetup set_up_compute(const Settings& settings);

// Puts the model's 4-d weights in channels_last when the setup asks for it.
void apply_memory_format(torch::nn::Module& model, const ComputeSetup& compute);

}  // namespace orchestrate

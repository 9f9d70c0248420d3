// Chooses the device a run trains on.
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace orchestrate {

// "auto": CUDA when a device is present, else CPU; "cuda" without a CUDA
// device is an Error saying so.
c10::Device select_device(const std::string& requested);

// The CUDA device of a data-parallel worker: each of the `local_workers`
// processes on a machine trains on its own GPU (local rank N on cuda:N), as
// NCCL requires. More workers than GPUs is a UsageError naming both counts,
// raised before any worker starts or any run row is written.
c10::Device worker_cuda_device(int local_rank, int local_workers);

}  // namespace orchestrate

#include "engine/setup/device.h"

#include <torch/cuda.h>

#include "orchestrate/error.h"

namespace orchestrate {

c10::Device select_device(const std::string& requested) {
  const bool cuda = torch::cuda::is_available();
  if (requested == "cuda" && !cuda)
    throw Error("[run] device = \"cuda\" but no CUDA device is available here; use device = \"auto\" or \"cpu\"");
  if (requested == "cuda" || (requested == "auto" && cuda)) return c10::Device(c10::kCUDA, 0);
  return c10::Device(c10::kCPU);
}

c10::Device worker_cuda_device(int local_rank, int local_workers) {
  const auto gpus = static_cast<int>(torch::cuda::device_count());
  if (local_workers > gpus)
    throw UsageError("run: " + std::to_string(local_workers) + " workers on this machine with [run] device on CUDA, "
                     "but it has " + std::to_string(gpus) + " CUDA device" + (gpus == 1 ? "" : "s") +
                     " (each worker trains on its own GPU); use --nproc " + std::to_string(gpus) +
                     " or fewer, or --set run.device='\"cpu\"' to train on the CPU with Gloo");
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(local_rank));
}

}  // namespace orchestrate

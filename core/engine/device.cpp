#include "device.h"

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

}  // namespace orchestrate

// nvml_busy_reader (device_busy.h): NVML's utilisation of one CUDA device.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <array>

#include "engine/train/device_busy.h"

namespace orchestrate {
namespace {

// NVML's C ABI, as nvml.h declares the calls used here. No nvml.h comes with
// CUDA's prefix on the build machine, and the library is the driver's, on
// GPU hosts only, so it is opened at run time rather than linked.
constexpr int kNvmlSuccess = 0;
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
struct NvmlUtilization {
  unsigned int gpu;     // percent of the last sample period a kernel ran
  unsigned int memory;  // percent of it device memory was read or written
};
using NvmlInit = int (*)();
using NvmlHandleByPciBusId = int (*)(const char*, NvmlDevice*);
using NvmlUtilizationRates = int (*)(NvmlDevice, NvmlUtilization*);

// A CUDA index is not an NVML index under CUDA_VISIBLE_DEVICES; the PCI bus
// id is the same device to both.
constexpr int kPciBusIdLength = 64;

}  // namespace

DeviceBusy::Reader nvml_busy_reader(int device_index) {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (library == nullptr) return {};
  const auto init = reinterpret_cast<NvmlInit>(dlsym(library, "nvmlInit_v2"));
  const auto handle_of = reinterpret_cast<NvmlHandleByPciBusId>(dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
  const auto utilization = reinterpret_cast<NvmlUtilizationRates>(dlsym(library, "nvmlDeviceGetUtilizationRates"));
  if (init == nullptr || handle_of == nullptr || utilization == nullptr || init() != kNvmlSuccess) return {};
  std::array<char, kPciBusIdLength> bus_id{};
  if (cudaDeviceGetPCIBusId(bus_id.data(), kPciBusIdLength, device_index) != cudaSuccess) return {};
  NvmlDevice device = nullptr;
  if (handle_of(bus_id.data(), &device) != kNvmlSuccess) return {};
  return [utilization, device]() -> std::optional<double> {
    NvmlUtilization rates{};
    if (utilization(device, &rates) != kNvmlSuccess) return std::nullopt;
    return static_cast<double>(rates.gpu);
  };
}

}  // namespace orchestrate

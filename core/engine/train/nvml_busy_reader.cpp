// nvml_busy_reader (device_busy.h): NVML's utilisation of one CUDA device.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <array>
#include <memory>
#include <mutex>

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

// NVML opened for one device, on first use: nvmlInit enumerates every GPU
// of the node, which can take a good part of a second, so it runs on the
// sampling thread, not in the run's setup.
class NvmlDeviceReading {
 public:
  explicit NvmlDeviceReading(int device_index) : device_index_(device_index) {}

  std::optional<double> percent() {
    std::call_once(opened_, [this] { open(); });
    if (utilization_ == nullptr) return std::nullopt;
    NvmlUtilization rates{};
    if (utilization_(device_, &rates) != kNvmlSuccess) return std::nullopt;
    return static_cast<double>(rates.gpu);
  }

 private:
  void open() {
    void* library = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (library == nullptr) return;
    const auto init = reinterpret_cast<NvmlInit>(dlsym(library, "nvmlInit_v2"));
    const auto handle_of =
        reinterpret_cast<NvmlHandleByPciBusId>(dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
    const auto utilization = reinterpret_cast<NvmlUtilizationRates>(dlsym(library, "nvmlDeviceGetUtilizationRates"));
    if (init == nullptr || handle_of == nullptr || utilization == nullptr || init() != kNvmlSuccess) return;
    std::array<char, kPciBusIdLength> bus_id{};
    if (cudaDeviceGetPCIBusId(bus_id.data(), kPciBusIdLength, device_index_) != cudaSuccess) {
      (void)cudaGetLastError();  // the next CUDA call's error must be its own
      return;
    }
    if (handle_of(bus_id.data(), &device_) != kNvmlSuccess) return;
    utilization_ = utilization;
  }

  const int device_index_;
  std::once_flag opened_;
  NvmlDevice device_ = nullptr;
  NvmlUtilizationRates utilization_ = nullptr;
};

}  // namespace

DeviceBusy::Reader nvml_busy_reader(int device_index) {
  auto reading = std::make_shared<NvmlDeviceReading>(device_index);
  return [reading]() { return reading->percent(); };
}

bool nvml_answers(int device_index) { return NvmlDeviceReading(device_index).percent().has_value(); }

}  // namespace orchestrate

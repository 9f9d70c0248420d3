// `orchestrate env`: what this machine gives a run, in one table to read
// before the first run or to paste into a bug report (as PyTorch's
// collect_env and `accelerate env` do): the versions, the GPUs, the CPU, and
// which of the GPU features a run would use here and, where not, why.
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <sys/utsname.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "analysis/table_format.h"
#include "cli/command.h"
#include "cli/options.h"
#include "cli/plugin_options.h"
#include "engine/recipe/usable_cores.h"
#include "engine/setup/matmul_peak.h"
#include "engine/setup/plugin_host.h"
#include "engine/train/device_busy.h"
#include "orchestrate/api.h"
#include "orchestrate/error.h"
#include "orchestrate/fused_ops/batch_norm_relu.h"
#include "store/host_peaks.h"
#include "store/run_liveness.h"
#include "store/run_store.h"

namespace orchestrate::cli {
namespace {

// 12040 -> "12.4", as CUDA writes its versions.
std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// major * 10000 + minor * 100 + patch, as cuDNN 9 (91900) and NCCL >= 2.9
// (22809) pack their versions -> "9.19.0", "2.28.9".
std::string packed_version_text(long version) {
  return std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." +
         std::to_string(version % 100);
}

// NCCL as LibTorch loaded it (libtorch_cuda needs libnccl.so.2), or "".
std::string nccl_version() {
  using GetVersion = int (*)(int*);
  const auto get_version = reinterpret_cast<GetVersion>(dlsym(RTLD_DEFAULT, "ncclGetVersion"));
  int version = 0;
  if (get_version == nullptr || get_version(&version) != 0) return "";
  return packed_version_text(version);
}

std::string gib(std::size_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return out.str();
}

struct Rows {
  Table table{{"what", "here"}, {}};
  void add(const std::string& what, const std::string& here) {
    table.rows.push_back({text_cell(what), text_cell(here)});
  }
};

void add_versions(Rows& rows) {
  rows.add("orchestrate", std::string(version()) + ", plugin API " + std::to_string(kPluginApiVersion));
  const bool cuda_build = at::detail::getCUDAHooks().hasCUDA() || at::globalContext().hasCuDNN() ||
                          torch::cuda::is_available();
  rows.add("LibTorch", std::string(TORCH_VERSION) + (cuda_build ? ", built with CUDA" : ", CPU only"));
  int runtime = 0;
  int driver = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) rows.add("CUDA runtime", cuda_version_text(runtime));
  (void)cudaGetLastError();
  rows.add("CUDA driver", cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0 ? cuda_version_text(driver)
                                                                                       : "none (no NVIDIA driver)");
  (void)cudaGetLastError();
  if (at::globalContext().hasCuDNN())
    rows.add("cuDNN", packed_version_text(at::detail::getCUDAHooks().versionRuntimeCuDNN()));
  const std::string nccl = nccl_version();
  rows.add("NCCL", nccl.empty() ? "not loaded (data-parallel CUDA jobs need it; Gloo serves the CPU)" : nccl);
}

void add_gpus(Rows& rows) {
  const std::size_t count = torch::cuda::device_count();
  if (count == 0) {
    rows.add("GPUs", "none: runs train on the CPU ([run] device = \"auto\")");
  } else {
    rows.add("GPUs", std::to_string(count));
    for (std::size_t i = 0; i < count; ++i) {
      const cudaDeviceProp* properties = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(i));
      rows.add("cuda:" + std::to_string(i), std::string(properties->name) + ", " +
                                                gib(properties->totalGlobalMem) + ", compute capability " +
                                                std::to_string(properties->major) + "." +
                                                std::to_string(properties->minor) + ", " +
                                                std::to_string(properties->multiProcessorCount) + " SMs");
    }
  }
  // What a CUDA run would use here, and otherwise why not.
  std::string busy = count == 0 ? "not measured: no GPU" : "";
  if (busy.empty()) busy = nvml_answers(0) ? "measured by NVML (report throughput's gpu_busy_percent)"
                                               : "not measured: NVML (libnvidia-ml.so.1, the driver's) does not "
                                                 "answer; the verdict infers launch-bound runs instead";
  rows.add("GPU busy share", busy);
  const std::string cudnn = fused_ops::why_cudnn_cannot_fuse();
  rows.add("fused batch norm + ReLU",
           !cudnn.empty() ? "unavailable: " + cudnn
           : count == 0   ? "needs a GPU (cuDNN has the functions; [model] fuse_norm_relu does nothing on the CPU)"
                          : "available ([model] fuse_norm_relu = true on resnet_v1, fp16, channels_last)");
}

void add_cpu(Rows& rows) {
  rows.add("CPU", device_model_name(c10::Device(c10::kCPU)));
  rows.add("cores", std::to_string(usable_cores()) + " usable by this process; LibTorch's intra-op threads " +
                        std::to_string(at::get_num_threads()));
  rows.add("CPU kernels", "ATen's " + at::get_cpu_capability() + " build, picked for this processor");
  struct utsname system {};
  rows.add("host", this_host_name() + (uname(&system) == 0 ? std::string(", ") + system.sysname + " " +
                                                                 system.release + " " + system.machine
                                                           : std::string()));
}

// The matmul peaks this host's runs take their MFU against, from the host's
// cache, read only (env creates nothing).
void add_peaks(Rows& rows) {
  std::string trouble;
  const std::vector<DevicePeak> peaks = read_host_peaks(&trouble);
  if (peaks.empty()) {
    rows.add("matmul peak", trouble.empty() ? "none measured on this host yet (a run measures it before its first "
                                              "step, for its MFU)"
                                            : "the host's cache cannot be read: " + trouble);
    return;
  }
  for (const DevicePeak& peak : peaks) {
    const std::string threads = peak.threads == 1 ? ", 1 thread"
                                : peak.threads > 1 ? ", " + std::to_string(peak.threads) + " threads"
                                                   : std::string();
    rows.add("matmul peak, " + peak.device + " " + peak.precision + threads,
             flops_text(peak.flops_per_s, "/s") + " (" + peak.measured_at + ", " + peak.method +
                 (peak.method.find(kFasterOfBothProducts) == std::string::npos
                      ? "; timed by mm alone: the next run measures it again"
                      : "") +
                 ")");
  }
}

void add_paths(Rows& rows, const std::string& plugin_path_option, const std::string& store_flag) {
  const std::string store = RunStore::resolve_path(store_flag);
  rows.add("run store", store + (std::filesystem::exists(store) ? "" : " (not created yet)"));
  Registry registry;
  const auto directories = plugin_search_path(plugin_path_option);
  const PluginScan scan = scan_plugins(registry, directories);
  std::string searched;
  for (const auto& directory : directories) searched += (searched.empty() ? "" : ":") + directory;
  std::string plugins = std::to_string(registry.plugins().size()) + " loaded from " + searched;
  if (!scan.refused.empty()) plugins += "; " + std::to_string(scan.refused.size()) + " refused (orchestrate plugins)";
  rows.add("plugins", plugins);
}

}  // namespace

int env_command(const std::vector<std::string>& arguments) {
  po::options_description options("env options");
  add_plugin_path_option(options);
  options.add_options()("db", po::value<std::string>()->default_value(""), "the run store a run would use")(
      "format", po::value<std::string>()->default_value("table"), "table, csv, json or markdown");
  po::variables_map values;
  if (!parse_options("env", "[options]", options, {}, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  Rows rows;
  add_versions(rows);
  add_gpus(rows);
  add_cpu(rows);
  add_peaks(rows);
  add_paths(rows, values["plugin-path"].as<std::string>(), values["db"].as<std::string>());
  std::cout << render(rows.table, format) << std::flush;
  return 0;
}

}  // namespace orchestrate::cli

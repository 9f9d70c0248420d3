#include "engine/setup/matmul_peak.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/cuda/CUDAContextLight.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/cuda.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <fstream>

#include "engine/precision/autocast_scope.h"
#include "engine/recipe/usable_cores.h"

namespace orchestrate {
namespace {

using Clock = std::chrono::steady_clock;

void wait_for(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// The largest side timed: on a CPU 1024 reaches sgemm's plateau (2 GFLOP,
// about 15 ms on two cores); a GPU needs 8192 (1.1 TFLOP, about 1 ms on an
// H100). The side starts at 256 and doubles while one product takes less
// than kLongEnough, so a slow case (bf16 on a CPU without bf16 units: under
// 1 GFLOP/s) stays at a size that is timed in milliseconds, not seconds.
std::int64_t largest_side(const c10::Device& device) { return device.is_cuda() ? 8192 : 1024; }
constexpr std::int64_t kFirstSide = 256;
constexpr std::chrono::milliseconds kLongEnough{10};

constexpr std::chrono::milliseconds kMeasureFor{1000};
constexpr int kMostRepeats = 80;
constexpr int kProductsPerRepeat = 4;  // on a GPU, one launch takes microseconds: time several

// The CPU time of every thread of this process, in seconds.
double process_cpu_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// The two ways ATen multiplies matrices, which need not be equally fast: on
// a CPU, a float16 mm goes to ATen's own gemm (1 to 3 GFLOP/s on a Zen 4
// EPYC) while linear goes to oneDNN (25 to 42 GFLOP/s there), which is what
// an autocast Linear layer runs. The peak is the faster one's.
enum class Product { mm, linear };
const char* product_name(Product product) { return product == Product::mm ? "mm" : "linear"; }

// Seconds one product of n x n matrices takes, once warm.
double seconds_per_product(const c10::Device& device, Product product, const at::Tensor& a, const at::Tensor& b,
                           at::Tensor& c, int products) {
  const auto start = Clock::now();
  for (int i = 0; i < products; ++i) {
    if (product == Product::mm)
      at::mm_out(c, a, b);
    else
      at::linear_out(c, a, b);  // a @ b^T: the same arithmetic
  }
  wait_for(device);
  return std::chrono::duration<double>(Clock::now() - start).count() / products;
}

// The faster product at the first side, each timed warm, the best of
// kChoiceRounds taken in turns, so that a busy moment slows both: a tenfold
// gap must not be lost to one preempted millisecond.
constexpr int kChoiceRounds = 5;
Product faster_product(const c10::Device& device, const at::TensorOptions& options, int products) {
  const auto a = at::randn({kFirstSide, kFirstSide}, options), b = at::randn({kFirstSide, kFirstSide}, options);
  auto c = at::mm(a, b);
  for (const Product product : {Product::mm, Product::linear}) seconds_per_product(device, product, a, b, c, 1);
  double best[2] = {0, 0};
  for (int round = 0; round < kChoiceRounds; ++round)
    for (const Product product : {Product::mm, Product::linear}) {
      const double seconds = seconds_per_product(device, product, a, b, c, products);
      auto& slot = best[static_cast<int>(product)];
      slot = round == 0 ? seconds : std::min(slot, seconds);
    }
  return best[1] < best[0] ? Product::linear : Product::mm;
}

}  // namespace

MeasuredPeak measure_matmul_peak(const c10::Device& device, PrecisionMode mode) {
  const auto options = at::TensorOptions().device(device).dtype(autocast_dtype(mode));  // fp32: float
  const int products = device.is_cuda() ? kProductsPerRepeat : 1;
  const Product product = faster_product(device, options, products);
  std::int64_t n = kFirstSide;
  double best_s = 0, wall_s = 0, cpu_s = 0;
  int repeats = 0;
  {
    at::Tensor a, b, c;
    for (;;) {
      a = at::randn({n, n}, options), b = at::randn({n, n}, options), c = at::mm(a, b);
      seconds_per_product(device, product, a, b, c, 1);  // warm-up
      const double once = seconds_per_product(device, product, a, b, c, products);
      if (n >= largest_side(device) || once >= std::chrono::duration<double>(kLongEnough).count()) break;
      n *= 2;
    }
    const auto until = Clock::now() + kMeasureFor;
    const double cpu_before = process_cpu_seconds();
    while (repeats < kMostRepeats && (repeats < 5 || Clock::now() < until)) {
      const double seconds = seconds_per_product(device, product, a, b, c, products);
      best_s = repeats++ == 0 ? seconds : std::min(best_s, seconds);
      wall_s += seconds * products;
    }
    cpu_s = process_cpu_seconds() - cpu_before;
  }
  // The 400 MB of a GPU's operands go back to the device, not to the
  // caching allocator's pool where the model could not use them.
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const std::string threads = device.is_cuda() ? "" : ", " + std::to_string(at::get_num_threads()) + " threads";
  MeasuredPeak peak{flops / best_s, std::to_string(n) + "x" + std::to_string(n) + " " + precision_mode_name(mode) +
                                        " products by " + product_name(product) + ", " + kFasterOfBothProducts +
                                        threads + ", best of " + std::to_string(repeats)};
  if (!device.is_cuda() && wall_s > 0) {
    const int runnable = std::max(1, std::min(at::get_num_threads(), usable_cores()));
    peak.cpu_share = std::min(1.0, cpu_s / (wall_s * runnable));
  }
  return peak;
}

std::string device_model_name(const c10::Device& device) {
  if (device.is_cuda()) {
    if (!torch::cuda::is_available()) return "cuda";
    return at::cuda::getDeviceProperties(device.has_index() ? device.index() : 0)->name;
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (!line.starts_with("model name")) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto first = line.find_first_not_of(' ', colon + 1);
    return first == std::string::npos ? "cpu" : line.substr(first);
  }
  return "cpu";
}

std::optional<double> datasheet_peak_flops(const std::string& gpu_name, PrecisionMode mode) {
  struct Sheet {
    const char* name_part;  // matched in order: "H100 PCIe" before "H100"
    double half_tflops;     // fp16 and bf16 tensor cores, dense
    double tf32_tflops;     // fp32 matmuls on TF32 tensor cores, dense
  };
  // NVIDIA's datasheets, dense figures (their headline figures are with 2:4 sparsity, twice these).
  static constexpr std::array<Sheet, 13> kSheets{{{"H100 PCIe", 756, 378},
                                                  {"H100 NVL", 835, 418},
                                                  {"H100", 989, 495},
                                                  {"H200", 989, 495},
                                                  {"GH200", 989, 495},
                                                  {"B200", 2250, 1100},
                                                  {"A100", 312, 156},
                                                  {"A10", 125, 62.5},
                                                  {"L40S", 362, 183},
                                                  {"L40", 181, 90.5},
                                                  {"L4", 121, 60},
                                                  {"V100", 125, 15.7},  // no TF32: its plain fp32
                                                  {"T4", 65, 8.1}}};
  for (const Sheet& sheet : kSheets) {
    if (gpu_name.find(sheet.name_part) == std::string::npos) continue;
    return (mode == PrecisionMode::fp32 ? sheet.tf32_tflops : sheet.half_tflops) * 1e12;
  }
  return std::nullopt;
}

}  // namespace orchestrate

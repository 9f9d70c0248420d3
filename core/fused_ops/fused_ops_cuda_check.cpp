// On a GPU: batch_norm_relu's fused cuDNN path against the unfused one, on
// the shapes ResNet-50 gives its batch norms at batch 256 and 224x224 (with
// and without the residual add), for the output, the running statistics and
// every gradient, then the time of a forward and backward of each.
//
// Both float16 paths are measured against the unfused path in float32 on
// the same numbers (relative L2 error), and the fused one passes when its
// error is within kErrorRatio of the unfused float16 path's: a value whose
// sum lands within rounding of zero takes the ReLU's other side in one path
// and not the other, so elementwise tolerances would fail any two correct
// float16 implementations on a tensor of 200 million values.
//
// Exits 1 when the fused path does not apply or a figure is off; prints one
// line a shape either way.
//   fused_ops_cuda_check [BATCH]      (default 256; gpu_checks fusedbn runs it)
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <torch/cuda.h>
#include <torch/nn/modules/batchnorm.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "orchestrate/fused_ops/batch_norm_relu.h"

namespace {

namespace nn = torch::nn;
using orchestrate::fused_ops::batch_norm_relu;
using orchestrate::fused_ops::NormFusion;

// The fused path may be this much less accurate than the unfused one, plus
// kErrorFloor for figures both get all but exact (the running mean).
constexpr double kErrorRatio = 2.0;
constexpr double kErrorFloor = 1e-4;
constexpr int kTimedRepeats = 30;

struct Shape {
  std::int64_t channels, size;
  bool residual;
};

// ||got - want|| / ||want||, in float64.
double relative_error(const at::Tensor& got, const at::Tensor& want) {
  const at::Tensor a = got.to(at::kDouble);
  const at::Tensor b = want.to(at::kDouble);
  return (a - b).norm().item<double>() / std::max(b.norm().item<double>(), 1e-30);
}

nn::BatchNorm2d cuda_norm(std::int64_t channels) {
  at::manual_seed(5);
  nn::BatchNorm2d norm(channels);
  at::NoGradGuard no_grad;
  norm->weight.uniform_(0.5, 1.5);
  norm->bias.uniform_(-0.5, 0.5);
  norm->to(at::kCUDA);
  return norm;
}

struct Pass {
  at::Tensor y, dx, dresidual;
};

Pass forward_backward(nn::BatchNorm2d& norm, const at::Tensor& x, const at::Tensor& residual,
                      const at::Tensor& upstream, NormFusion fusion) {
  const at::Tensor x_leaf = x.detach().requires_grad_();
  const at::Tensor residual_leaf = residual.defined() ? residual.detach().requires_grad_() : at::Tensor();
  norm->zero_grad();
  Pass pass;
  pass.y = batch_norm_relu(*norm, x_leaf, residual_leaf, fusion);
  pass.y.backward(upstream);
  pass.dx = x_leaf.grad();
  if (residual.defined()) pass.dresidual = residual_leaf.grad();
  return pass;
}

double milliseconds_per_pass(nn::BatchNorm2d& norm, const at::Tensor& x, const at::Tensor& residual,
                             const at::Tensor& upstream, NormFusion fusion) {
  for (int i = 0; i < 3; ++i) forward_backward(norm, x, residual, upstream, fusion);
  torch::cuda::synchronize();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kTimedRepeats; ++i) forward_backward(norm, x, residual, upstream, fusion);
  torch::cuda::synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
         kTimedRepeats;
}

struct Comparison {
  std::string name;
  double fused, unfused;  // each float16 path's error against float32
  bool agrees() const { return fused <= kErrorRatio * unfused + kErrorFloor; }
};

bool check(std::int64_t batch, const Shape& shape) {
  const auto half = at::TensorOptions().device(at::kCUDA).dtype(at::kHalf);
  at::manual_seed(9);
  const auto layout = at::MemoryFormat::ChannelsLast;
  const at::Tensor x = (at::randn({batch, shape.channels, shape.size, shape.size}, half) * 2 + 0.5).contiguous(layout);
  const at::Tensor residual = shape.residual ? at::randn_like(x).contiguous(layout) : at::Tensor();
  const at::Tensor upstream = at::randn_like(x).contiguous(layout);
  auto fused = cuda_norm(shape.channels);
  auto plain = cuda_norm(shape.channels);
  auto exact = cuda_norm(shape.channels);
  const std::string label = "[" + std::to_string(batch) + ", " + std::to_string(shape.channels) + ", " +
                            std::to_string(shape.size) + ", " + std::to_string(shape.size) + "]" +
                            (shape.residual ? " + residual" : "");
  const std::string why = orchestrate::fused_ops::why_not_fused(*fused, x, residual);
  if (!why.empty()) {
    std::printf("%-34s NOT FUSED: %s\n", label.c_str(), why.c_str());
    return false;
  }
  const Pass a = forward_backward(fused, x, residual, upstream, NormFusion::cudnn);
  const std::string after = orchestrate::fused_ops::why_not_fused(*fused, x, residual);
  if (!after.empty()) {  // cuDNN refused, and the unfused kernels ran in its place (stderr says why)
    std::printf("%-34s NOT FUSED: %s\n", label.c_str(), after.c_str());
    return false;
  }
  const Pass b = forward_backward(plain, x, residual, upstream, NormFusion::off);
  const Pass r = forward_backward(exact, x.to(at::kFloat), residual.defined() ? residual.to(at::kFloat) : residual,
                                  upstream.to(at::kFloat), NormFusion::off);
  const auto compare = [](const std::string& name, const at::Tensor& f, const at::Tensor& u, const at::Tensor& e) {
    return Comparison{name, relative_error(f, e), relative_error(u, e)};
  };
  std::vector<Comparison> comparisons = {
      compare("y", a.y, b.y, r.y),
      compare("dx", a.dx, b.dx, r.dx),
      compare("running_mean", fused->running_mean, plain->running_mean, exact->running_mean),
      compare("running_var", fused->running_var, plain->running_var, exact->running_var),
      compare("dweight", fused->weight.grad(), plain->weight.grad(), exact->weight.grad()),
      compare("dbias", fused->bias.grad(), plain->bias.grad(), exact->bias.grad()),
  };
  if (shape.residual) comparisons.push_back(compare("dresidual", a.dresidual, b.dresidual, r.dresidual));
  bool agrees = fused->num_batches_tracked.item<std::int64_t>() == plain->num_batches_tracked.item<std::int64_t>();
  const Comparison* worst = &comparisons.front();
  for (const Comparison& c : comparisons) {
    agrees = agrees && c.agrees();
    if (c.fused - kErrorRatio * c.unfused > worst->fused - kErrorRatio * worst->unfused) worst = &c;
  }
  const double fused_ms = milliseconds_per_pass(fused, x, residual, upstream, NormFusion::cudnn);
  const double plain_ms = milliseconds_per_pass(plain, x, residual, upstream, NormFusion::off);
  std::printf("%-34s %s (closest call %s: %.2e fused, %.2e unfused, against float32); fused %.3f ms, unfused "
              "%.3f ms: %.2fx\n",
              label.c_str(), agrees ? "agrees" : "DIFFERS", worst->name.c_str(), worst->fused, worst->unfused,
              fused_ms, plain_ms, plain_ms / fused_ms);
  if (!agrees) {
    for (const Comparison& c : comparisons)
      std::printf("    %s: %.3e fused, %.3e unfused\n", c.name.c_str(), c.fused, c.unfused);
  }
  return agrees;
}

}  // namespace

int main(int argc, char** argv) {
  if (!torch::cuda::is_available()) {
    std::fprintf(stderr, "fused_ops_cuda_check: no CUDA device; run it on a GPU machine (gpu_checks fusedbn)\n");
    return 2;
  }
  const std::int64_t batch = argc > 1 ? std::atoll(argv[1]) : 256;
  std::printf("fused_ops_cuda_check on %s, batch %lld\n", at::cuda::getCurrentDeviceProperties()->name,
              static_cast<long long>(batch));
  // ResNet-50's batch norms: the stem, a bottleneck's inner two and its last (with the add), stage by stage.
  const std::vector<Shape> shapes = {{64, 112, false}, {64, 56, false},  {256, 56, true},  {128, 28, false},
                                     {512, 28, true},  {256, 14, false}, {1024, 14, true}, {2048, 7, true}};
  // And one at batch 2 on 7x7, where the running variance's unbiased factor
  // (98/97) is a 1 % difference an unfused kernel's biased one would show.
  std::vector<std::pair<std::int64_t, Shape>> runs;
  for (const Shape& shape : shapes) runs.emplace_back(batch, shape);
  runs.emplace_back(2, Shape{2048, 7, true});
  bool all_agree = true;
  for (const auto& [size, shape] : runs) {
    try {
      all_agree = check(size, shape) && all_agree;
    } catch (const std::exception& e) {  // one shape's failure, named, and the next shapes still run
      std::printf("batch %lld, %lld channels at %lldx%lld%s FAILED: %s\n", static_cast<long long>(size),
                  static_cast<long long>(shape.channels), static_cast<long long>(shape.size),
                  static_cast<long long>(shape.size), shape.residual ? " + residual" : "", e.what());
      all_agree = false;
    }
  }
  std::printf("%s\n", all_agree ? "fused batch norm + ReLU agrees with the unfused kernels on every shape"
                                 : "fused batch norm + ReLU DIFFERS from the unfused kernels, or did not apply");
  return all_agree ? 0 : 1;
}

#include "orchestrate/model_flops.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <set>

#include "orchestrate/profiler_start.h"

namespace orchestrate {

namespace {

// cuDNN's autotuning off for the count, restored after: the count's one
// fp32 image is a shape training never runs, so timing each convolution's
// algorithms for it (cudnn.benchmark) only lengthens the setup before the
// first step, by as many autotunings as the model has convolution shapes.
class NoCudnnAutotuning {
 public:
  NoCudnnAutotuning() : was_on_(at::globalContext().benchmarkCuDNN()) { at::globalContext().setBenchmarkCuDNN(false); }
  ~NoCudnnAutotuning() { at::globalContext().setBenchmarkCuDNN(was_on_); }
  NoCudnnAutotuning(const NoCudnnAutotuning&) = delete;
  NoCudnnAutotuning& operator=(const NoCudnnAutotuning&) = delete;

 private:
  const bool was_on_;
};

}  // namespace

FlopCount forward_flops_per_image(Model& model, const ModelInput& input, const c10::Device& device) {
  namespace profiler = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  using torch::profiler::impl::ProfilerConfig;
  using torch::profiler::impl::ProfilerState;

  const bool was_training = model.is_training();
  model.eval();  // batch norm must not update its running statistics
  const auto image = at::zeros({1, input.channels, input.height, input.width}, at::TensorOptions().device(device));
  // Shapes are what the FLOP formulas read.
  const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/false,
                              /*with_stack=*/false, /*with_flops=*/true);
  const std::set<ActivityType> activities{ActivityType::CPU};
  FlopCount count;
  const NoCudnnAutotuning no_autotuning;
  try {
    at::NoGradGuard no_grad;
    start_profiler(config, activities);
    model.forward(image);
  } catch (...) {
    profiler::disableProfiler();
    model.train(was_training);
    throw;
  }
  const auto result = profiler::disableProfiler();
  model.train(was_training);
  for (const auto& event : result->events()) {
    if (event.flops() == 0) continue;
    count.total += event.flops();
    count.by_op[event.name()] += event.flops();
  }
  return count;
}

}  // namespace orchestrate

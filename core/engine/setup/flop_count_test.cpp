#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include <stdexcept>

#include "orchestrate/model_flops.h"

namespace orchestrate {
namespace {

// A linear model that notes whether cuDNN would autotune while it runs.
class AutotuningWitness : public Model {
 public:
  explicit AutotuningWitness(bool fail) : fail_(fail) { linear_ = register_module("linear", torch::nn::Linear(4, 3)); }
  at::Tensor forward(const at::Tensor& images) override {
    autotuning_seen = at::globalContext().benchmarkCuDNN();
    if (fail_) throw std::runtime_error("forward failed");
    return linear_(images.flatten(1));
  }
  bool autotuning_seen = true;

 private:
  const bool fail_;
  torch::nn::Linear linear_{nullptr};
};

// The count's one image is a shape training never runs: autotuning each
// convolution for it would only lengthen the setup (cudnn.benchmark). The
// run's own setting is back afterwards, also when the forward pass fails.
TEST(FlopCount, AutotunesNoConvolutionForItsOneImageAndLeavesTheSettingAsItWas) {
  const ModelInput input{1, 2, 2, 3};
  for (const bool was_on : {true, false}) {
    at::globalContext().setBenchmarkCuDNN(was_on);
    AutotuningWitness model(false);
    const FlopCount count = forward_flops_per_image(model, input, c10::Device(c10::kCPU));
    EXPECT_EQ(count.total, 2U * 4 * 3);
    EXPECT_FALSE(model.autotuning_seen);
    EXPECT_EQ(at::globalContext().benchmarkCuDNN(), was_on);
  }
  AutotuningWitness failing(true);
  at::globalContext().setBenchmarkCuDNN(true);
  EXPECT_THROW(forward_flops_per_image(failing, input, c10::Device(c10::kCPU)), std::runtime_error);
  EXPECT_FALSE(failing.autotuning_seen);
  EXPECT_TRUE(at::globalContext().benchmarkCuDNN());
}

}  // namespace
}  // namespace orchestrate

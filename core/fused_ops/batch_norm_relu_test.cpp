// batch_norm_relu off the GPU: the module's own forward, add and ReLU, with
// its running statistics and counter as BatchNorm2d leaves them, whatever
// fusion is asked for; and why_not_fused names each input cuDNN's fused
// kernels do not take. The fused kernels themselves need a GPU:
// fused_ops_cuda_check (scripts/bench/gpu_checks fusedbn).
#include "batch_norm_relu.h"
#include "batch_norm_relu_backward.h"
#include "cudnn_batch_norm_relu.h"
#include "cudnn_library.h"
#include "refused_calls.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/batchnorm.h>

namespace orchestrate::fused_ops {
namespace {

namespace nn = torch::nn;

nn::BatchNorm2d norm_with_statistics(std::int64_t channels, std::uint64_t seed) {
  at::manual_seed(seed);
  nn::BatchNorm2d norm(channels);
  at::NoGradGuard no_grad;
  norm->weight.uniform_(0.5, 1.5);
  norm->bias.uniform_(-0.5, 0.5);
  norm->running_mean.uniform_(-1, 1);
  norm->running_var.uniform_(0.5, 2);
  return norm;
}

at::Tensor half_channels_last(std::int64_t channels) {
  return at::randn({2, channels, 3, 3}).to(at::kHalf).contiguous(at::MemoryFormat::ChannelsLast);
}

TEST(BatchNormRelu, OffTheGpuItIsTheModulesForwardAddAndRelu) {
  for (const NormFusion fusion : {NormFusion::off, NormFusion::cudnn}) {
    auto tested = norm_with_statistics(8, 7);
    auto reference = norm_with_statistics(8, 7);
    at::manual_seed(11);
    const at::Tensor x = at::randn({4, 8, 5, 5}).requires_grad_();
    const at::Tensor residual = at::randn({4, 8, 5, 5}).requires_grad_();
    const at::Tensor x_ref = x.detach().clone().requires_grad_();
    const at::Tensor residual_ref = residual.detach().clone().requires_grad_();

    const at::Tensor y = batch_norm_relu(*tested, x, residual, fusion);
    const at::Tensor y_ref = (reference->forward(x_ref) + residual_ref).relu();
    EXPECT_TRUE(at::allclose(y, y_ref));
    EXPECT_GT(y.eq(0).sum().item<std::int64_t>(), 0) << "the ReLU cut some values";
    EXPECT_TRUE(at::allclose(tested->running_mean, reference->running_mean));
    EXPECT_TRUE(at::allclose(tested->running_var, reference->running_var));
    EXPECT_EQ(tested->num_batches_tracked.item<std::int64_t>(), 1);

    const at::Tensor upstream = at::randn_like(y);
    ASSERT_TRUE(y.requires_grad());
    (y * upstream).sum().backward();
    ASSERT_TRUE(x.grad().defined());
    ASSERT_TRUE(residual.grad().defined());
    ASSERT_TRUE(tested->weight.grad().defined());
    (y_ref * upstream).sum().backward();
    EXPECT_TRUE(at::allclose(x.grad(), x_ref.grad()));
    EXPECT_TRUE(at::allclose(residual.grad(), residual_ref.grad()));
    EXPECT_TRUE(at::allclose(tested->weight.grad(), reference->weight.grad()));
    EXPECT_TRUE(at::allclose(tested->bias.grad(), reference->bias.grad()));

    const at::Tensor no_residual = batch_norm_relu(*tested, x.detach(), at::Tensor(), fusion);
    EXPECT_TRUE(at::allclose(no_residual, reference->forward(x.detach()).relu()));
  }
}

TEST(BatchNormRelu, NamesWhatTheFusedKernelsDoNotTake) {
  auto norm = norm_with_statistics(8, 3);
  const at::Tensor fits = half_channels_last(8);
  EXPECT_EQ(why_not_fused(*norm, fits, fits.clone()), "the input is not on a CUDA device")
      << "everything else about it is what cuDNN fuses";
  EXPECT_EQ(why_not_fused(*norm, fits.to(at::kFloat), at::Tensor()), "the input is Float, not Half");
  EXPECT_EQ(why_not_fused(*norm, fits.to(at::kBFloat16), at::Tensor()), "the input is BFloat16, not Half");
  EXPECT_EQ(why_not_fused(*norm, fits.contiguous(), at::Tensor()), "the input is not channels_last");
  EXPECT_EQ(why_not_fused(*norm, fits.flatten(2), at::Tensor()), "the input is 3-d, not 4-d");
  EXPECT_EQ(why_not_fused(*norm, fits, fits.contiguous()),
            "the residual [2, 8, 3, 3] differs from the input [2, 8, 3, 3] in shape, type, device or layout");
  EXPECT_EQ(why_not_fused(*norm, fits, half_channels_last(8).narrow(0, 0, 1)),
            "the residual [1, 8, 3, 3] differs from the input [2, 8, 3, 3] in shape, type, device or layout");

  const at::Tensor wider = half_channels_last(8 + 1).narrow(1, 1, 8);  // a view 2 bytes into its storage
  const at::Tensor offset = at::empty({2 * 8 * 3 * 3 + 1}, at::kHalf).narrow(0, 1, 2 * 8 * 3 * 3)
                                .view({2, 3, 3, 8}).permute({0, 3, 1, 2});
  ASSERT_TRUE(offset.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_EQ(why_not_fused(*norm, offset, at::Tensor()),
            "the input or the residual does not start on a 16-byte boundary");
  EXPECT_EQ(why_not_fused(*norm, fits, offset), "the input or the residual does not start on a 16-byte boundary");
  EXPECT_EQ(why_not_fused(*norm, wider, at::Tensor()), "the input is not channels_last")
      << "a channel slice is not dense";

  EXPECT_EQ(why_not_fused(*norm, half_channels_last(8).narrow(0, 0, 1).narrow(2, 0, 1).narrow(3, 0, 1), at::Tensor()),
            "fewer than 2 values a channel: no batch variance");
  EXPECT_EQ(why_not_fused(*norm, half_channels_last(0), at::Tensor()),
            "fewer than 2 values a channel: no batch variance")
      << "no channels: answered, not divided by";
  auto elsewhere = norm_with_statistics(8, 3);
  elsewhere->weight = at::empty({8}, at::TensorOptions().device(at::kMeta));  // (Module::to cannot move to meta)
  EXPECT_EQ(why_not_fused(*elsewhere, fits, at::Tensor()), "the batch norm is on meta, the input on cpu");

  auto six = norm_with_statistics(6, 3);
  EXPECT_EQ(why_not_fused(*six, half_channels_last(6), at::Tensor()), "6 channels, not a multiple of 4");
  nn::BatchNorm2d plain(nn::BatchNorm2dOptions(8).affine(false));
  EXPECT_EQ(why_not_fused(*plain, fits, at::Tensor()),
            "the batch norm has no affine parameters or running statistics");
  at::globalContext().setUserEnabledCuDNN(false);
  EXPECT_EQ(why_not_fused(*norm, fits, at::Tensor()), "cuDNN is switched off");
  at::globalContext().setUserEnabledCuDNN(true);
  norm->eval();
  EXPECT_EQ(why_not_fused(*norm, fits, at::Tensor()), "the module is in evaluation mode");
}

// The fused function itself, called with and without a residual, gets as far
// as its own refusal of a CPU input: LibTorch's Function::apply asks every
// tensor argument for its device, so a missing residual must reach it as an
// empty optional, never as an undefined tensor (which has no device).
TEST(BatchNormRelu, TheFusedFunctionTakesAMissingResidual) {
  auto norm = norm_with_statistics(8, 3);
  const at::Tensor x = half_channels_last(8).requires_grad_();
  for (const at::Tensor& residual : {at::Tensor(), half_channels_last(8)}) {
    try {
      cudnn_batch_norm_relu(x, residual, norm->weight, norm->bias, norm->running_mean, norm->running_var, 0.1, 1e-5);
      ADD_FAILURE() << "a CPU input ran the fused kernels";
    } catch (const CudnnRefused& refused) {
      EXPECT_STREQ(refused.what(), "the input is not on a CUDA device");
    }
  }
}

// A refusal is kept for the shape cuDNN refused, with or without the
// residual, and for nothing else: one shape's limits in the persistent
// kernels must not turn the fused path off for the rest of the model.
TEST(BatchNormRelu, ARefusalIsKeptForThatShapeAlone) {
  RefusedCalls refused;
  const at::Tensor stem = at::empty({4, 64, 112, 112}, at::kHalf);
  const at::Tensor block = at::empty({4, 256, 56, 56}, at::kHalf);
  EXPECT_TRUE(refused.add(stem, false));
  EXPECT_FALSE(refused.add(stem, false)) << "said once";
  EXPECT_TRUE(refused.contains(at::empty({4, 64, 112, 112}, at::kHalf), false));
  EXPECT_FALSE(refused.contains(stem, true)) << "the same shape with the residual added is another call";
  EXPECT_FALSE(refused.contains(block, false));
  EXPECT_FALSE(refused.contains(at::empty({2, 64, 112, 112}, at::kHalf), false)) << "another batch";
}

// The way back when cuDNN refuses the fused backward: from the forward's
// output and the batch statistics it saved (as cuDNN saves them), LibTorch's
// kernels give autograd's gradients of relu(batch_norm(x) + residual), in
// float32 and in the fused path's float16 channels-last.
TEST(BatchNormRelu, TheUnfusedBackwardGivesAutogradsGradients) {
  for (const at::ScalarType type : {at::kFloat, at::kHalf}) {
    for (const bool adds : {false, true}) {
      SCOPED_TRACE(std::string(c10::toString(type)) + (adds ? " with the residual" : " without"));
      auto norm = norm_with_statistics(8, 5);
      at::manual_seed(13);
      const auto layout = at::MemoryFormat::ChannelsLast;
      const at::Tensor x = at::randn({4, 8, 5, 5}).to(type).contiguous(layout).requires_grad_();
      const at::Tensor residual = at::randn({4, 8, 5, 5}).to(type).contiguous(layout).requires_grad_();
      const at::Tensor weight = norm->weight.detach().clone().requires_grad_();
      const at::Tensor bias = norm->bias.detach().clone().requires_grad_();
      const double eps = 1e-5;

      auto [normed, saved_mean, saved_inverse_std] = at::native_batch_norm(
          x, weight, bias, norm->running_mean.clone(), norm->running_var.clone(), true, 0.1, eps);
      const at::Tensor y = (adds ? normed + residual : normed).relu();
      ASSERT_GT(y.eq(0).sum().item<std::int64_t>(), 0) << "the ReLU cut some values";
      const at::Tensor dy = at::randn(y.sizes()).to(type).contiguous(layout);
      (y.to(at::kFloat) * dy.to(at::kFloat)).sum().backward();

      const BatchNormReluGradients got = unfused_batch_norm_relu_backward(
          dy, x.detach(), y.detach(), norm->weight.detach(), saved_mean, saved_inverse_std, eps, adds);
      const double tolerance = type == at::kHalf ? 1e-2 : 1e-5;
      EXPECT_TRUE(at::allclose(got.x.to(at::kFloat), x.grad().to(at::kFloat), tolerance, tolerance));
      EXPECT_TRUE(at::allclose(got.weight, weight.grad(), tolerance, tolerance));
      EXPECT_TRUE(at::allclose(got.bias, bias.grad(), tolerance, tolerance));
      EXPECT_EQ(got.residual.defined(), adds);
      if (adds) {
        EXPECT_TRUE(at::allclose(got.residual.to(at::kFloat), residual.grad().to(at::kFloat), tolerance, tolerance));
      }
    }
  }
}

// Needs no GPU: the CUDA LibTorch every build uses has loaded its cuDNN, and
// each function the fused path calls is found in it by name.
TEST(BatchNormRelu, FindsEveryCudnnFunctionInTheCudnnLibTorchLoaded) {
  const CudnnLibrary& cudnn = CudnnLibrary::loaded();
  EXPECT_EQ(cudnn.missing, "");
  EXPECT_NE(cudnn.forward_training, nullptr);
  EXPECT_NE(cudnn.backward, nullptr);
  ASSERT_NE(cudnn.get_error_string, nullptr);
  EXPECT_STREQ(cudnn.get_error_string(CUDNN_STATUS_NOT_SUPPORTED), "CUDNN_STATUS_NOT_SUPPORTED");
}

}  // namespace
}  // namespace orchestrate::fused_ops

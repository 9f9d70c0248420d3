// Gradient sync alone, training in one process with a compressor that sends
// half of each gradient and keeps the rest as a residual: the parameter's
// gradient becomes what was sent, the residual is the state a checkpoint
// keeps per rank, and a job resumed on fewer ranks continues from the mean
// of the saved ranks' residuals (gradient_compression.h's contract).
#include "engine/train/gradient_sync.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <map>

namespace orchestrate {
namespace {

class HalfSender final : public GradientCompressor {
 public:
  explicit HalfSender(at::Tensor parameter)
      : parameter_(std::move(parameter)), residual_(at::zeros_like(parameter_)) {}
  std::vector<CompressedGradient> compress(const CompressionStep&) override {
    const auto total = parameter_.grad() + residual_;
    residual_ = total / 2;
    return {CompressedGradient{at::Tensor(), (total / 2).reshape({-1}).to(at::kFloat)}};
  }
  StateDict state_dict() const override { return {{"residual", residual_}}; }
  void load_state_dict(const StateDict& state) override { residual_ = state.at("residual").clone(); }
  const at::Tensor& residual() const { return residual_; }

 private:
  at::Tensor parameter_;
  at::Tensor residual_;
};

TEST(GradientSync, AloneTheCompressorsMessageBecomesTheGradientAndItsResidualIsTheState) {
  auto w = at::zeros({4}).requires_grad_();
  HalfSender compressor(w);
  GradientSync sync(nullptr, {w}, &compressor, "half_sender", 25.0);
  w.mutable_grad() = at::full({4}, 8.0);
  std::map<std::string, at::Tensor> metrics;
  StepTiming timing;
  PhaseTimer timer(c10::kCPU);
  timer.compute_begins();
  timer.compute_ends();
  sync.exchange_compressed(/*skipping=*/false, CompressionStep{0, 0.0, metrics}, timing, timer);
  EXPECT_TRUE(w.grad().equal(at::full({4}, 4.0))) << "what was sent, averaged over a world of one";
  sync.gather_state();
  const StateDict saved = sync.state_dict();
  ASSERT_EQ(saved.size(), 1U);
  EXPECT_TRUE(saved.at("rank0").equal(at::full({4}, 4.0)));

  auto w2 = at::zeros({4}).requires_grad_();
  HalfSender fresh(w2);
  GradientSync resumed(nullptr, {w2}, &fresh, "half_sender", 25.0);
  resumed.load_state_dict(saved);
  EXPECT_TRUE(fresh.residual().equal(at::full({4}, 4.0)));
}

TEST(GradientSync, AJobResumedOnFewerRanksTakesTheMeanOfTheSavedResiduals) {
  auto w = at::zeros({2}).requires_grad_();
  HalfSender compressor(w);
  GradientSync sync(nullptr, {w}, &compressor, "half_sender", 25.0);
  sync.load_state_dict({{"rank0", at::full({2}, 2.0)}, {"rank1", at::full({2}, 6.0)}});
  EXPECT_TRUE(compressor.residual().equal(at::full({2}, 4.0)));
}

}  // namespace
}  // namespace orchestrate

// The gradients a CUDA graph writes, made the parameters' as the eager step
// would hold them: attached, copied or summed. No GPU is needed: the test
// writes the graph's buffers itself, as a replay would, and compares with
// what backward's own accumulation gives on the same values.
#include "engine/train/graph_gradients.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <vector>

namespace orchestrate {
namespace {

struct Model {
  at::Tensor weight = at::zeros({4}).requires_grad_();
  at::Tensor unused = at::zeros({2}).requires_grad_();  // backward gives it no gradient
};

// What a capture leaves: each parameter with the buffer backward made.
void capture(GraphGradients& gradients, Model& m) {
  gradients.begin(/*clear=*/true);
  m.weight.mutable_grad() = at::zeros({4});
  gradients.adopt_captured();
}

// A replay of micro-batch `values` (the graph's buffer overwritten), then finish().
void replay(GraphGradients& gradients, Model& m, const at::Tensor& graph_buffer, const at::Tensor& values) {
  gradients.begin(/*clear=*/false);
  graph_buffer.copy_(values);
  gradients.finish();
}

// Backward's own accumulation of the same micro-batch gradients.
at::Tensor eager_sum(const std::vector<at::Tensor>& micro) {
  auto w = at::zeros({4}).requires_grad_();
  for (const auto& g : micro) (w * g).sum().backward();
  return w.grad();
}

std::vector<at::Tensor> micro_batches() {
  return {at::tensor({0.1f, 1e-8f, 3.0f, -2.5f}), at::tensor({0.7f, 1.0f, -3.0f, 1e7f}),
          at::tensor({1e-3f, 2.2f, 0.3f, -1e7f})};
}

TEST(GraphGradients, OneMicroBatchAnUpdateAttachesTheGraphsBufferWithoutACopy) {
  Model m;
  GraphGradients gradients({m.weight, m.unused}, 1);
  capture(gradients, m);
  const at::Tensor buffer = m.weight.grad();
  replay(gradients, m, buffer, micro_batches()[0]);
  EXPECT_TRUE(m.weight.grad().is_same(buffer));
  EXPECT_TRUE(m.weight.grad().equal(micro_batches()[0]));
  EXPECT_FALSE(m.unused.grad().defined());
  m.weight.mutable_grad().reset();  // the update's zero_grad
  replay(gradients, m, buffer, micro_batches()[1]);
  EXPECT_TRUE(m.weight.grad().equal(micro_batches()[1]));
}

TEST(GraphGradients, SeveralMicroBatchesSumAsBackwardDoesToTheBitInMemoryTheNextReplayLeavesAlone) {
  Model m;
  GraphGradients gradients({m.weight, m.unused}, 3);
  capture(gradients, m);
  const at::Tensor buffer = m.weight.grad();
  for (int update = 0; update < 2; ++update) {
    for (const auto& g : micro_batches()) replay(gradients, m, buffer, g);
    EXPECT_FALSE(m.weight.grad().is_same(buffer));
    EXPECT_TRUE(m.weight.grad().equal(eager_sum(micro_batches()))) << "update " << update;
    EXPECT_FALSE(m.unused.grad().defined());
    m.weight.mutable_grad().reset();  // the update's zero_grad
  }
}

// A run stopped between micro-batches saved the sum so far; resumed, the
// next replay adds to it. And a capture in the middle of an update keeps
// what the eager micro-batches before it summed.
TEST(GraphGradients, WhatTheUpdateHeldBeforeIsAddedTo) {
  const auto g = micro_batches();
  Model resumed;
  GraphGradients gradients({resumed.weight, resumed.unused}, 3);
  capture(gradients, resumed);
  const at::Tensor buffer = resumed.weight.grad();
  resumed.weight.mutable_grad().reset();
  resumed.weight.mutable_grad() = eager_sum({g[0], g[1]});  // the checkpoint's gradients
  replay(gradients, resumed, buffer, g[2]);
  EXPECT_TRUE(resumed.weight.grad().equal(eager_sum(g)));

  Model midway;
  GraphGradients late({midway.weight, midway.unused}, 3);
  midway.weight.mutable_grad() = eager_sum({g[0]});  // an eager micro-batch before the capture
  late.begin(/*clear=*/true);
  EXPECT_FALSE(midway.weight.grad().defined()) << "the capture's backward starts from none";
  midway.weight.mutable_grad() = at::zeros({4});
  late.adopt_captured();
  midway.weight.grad().copy_(g[1]);  // the capture's first replay
  late.finish();
  EXPECT_TRUE(midway.weight.grad().equal(eager_sum({g[0], g[1]})));
}

TEST(GraphGradients, AFailedCaptureOrAReleasedGraphLeavesTheUpdatesOwnGradients) {
  Model m;
  GraphGradients gradients({m.weight, m.unused}, 2);
  const at::Tensor held = at::full({4}, 2.0f);
  m.weight.mutable_grad() = held;
  gradients.begin(/*clear=*/true);
  m.weight.mutable_grad() = at::zeros({4});  // what a broken capture left
  gradients.restore();
  EXPECT_TRUE(m.weight.grad().is_same(held));

  GraphGradients single({m.weight, m.unused}, 1);
  m.weight.mutable_grad().reset();
  capture(single, m);
  const at::Tensor buffer = m.weight.grad();
  replay(single, m, buffer, micro_batches()[0]);
  single.release();
  EXPECT_FALSE(m.weight.grad().defined()) << "the graph's buffer is not the parameter's to keep";
  EXPECT_FALSE(single.captured());
}

}  // namespace
}  // namespace orchestrate

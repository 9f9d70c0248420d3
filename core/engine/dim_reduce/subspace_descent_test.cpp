#include "engine/dim_reduce/subspace_descent.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

namespace orchestrate {
namespace {

// f(w) = 1/2 (w - w*)^T A (w - w*) on 12 weights, with a subspace of 3
// orthonormal directions that holds w* - w0: descent in the subspace alone
// can reach the minimum.
struct Quadratic {
  at::Tensor a, optimum, start, components;
  double loss(const at::Tensor& w) const {
    const auto e = (w - optimum).to(at::kDouble);
    return 0.5 * at::dot(e, at::mv(a.to(at::kDouble), e)).item<double>();
  }
  at::Tensor gradient(const at::Tensor& w) const { return at::mv(a, w - optimum); }
};

Quadratic quadratic() {
  at::manual_seed(3);
  const auto q = std::get<0>(at::linalg_qr(at::randn({12, 12})));
  Quadratic f;
  f.a = at::matmul(at::matmul(q, at::diag(at::linspace(0.5, 3.0, 12))), q.t());
  f.components = std::get<0>(at::linalg_qr(at::randn({12, 3}))).t().contiguous();  // [3, 12]
  f.start = at::randn({12});
  f.optimum = f.start + at::mv(f.components.t(), at::tensor({2.0F, -1.0F, 0.5F}));
  return f;
}

SubspaceDescentSettings without_residual() {
  SubspaceDescentSettings settings;
  settings.alpha = 0;
  return settings;
}

TEST(SubspaceDescentTest, ReachesAMinimumThatLiesInTheSubspace) {
  const auto f = quadratic();
  SubspaceDescent descent(f.components, without_residual());
  auto w = f.start.clone();
  double previous = f.loss(w);
  const double initial = previous;
  for (int i = 0; i < 30; ++i) {
    const auto step = descent.step(w, f.gradient(w), f.loss(w), [&](const at::Tensor& t) { return f.loss(t); });
    w = step.weights;
    EXPECT_LE(f.loss(w), previous + 1e-9) << "update " << i << " raised the loss";
    previous = f.loss(w);
  }
  EXPECT_LT(previous, 1e-8 * initial) << "BFGS in 3 dimensions converges on a quadratic";
  // Nothing moved outside the subspace (alpha = 0).
  const auto moved = w - f.start;
  EXPECT_LT((moved - at::mv(f.components.t(), at::mv(f.components, moved))).abs().max().item<double>(), 1e-5);
}

TEST(SubspaceDescentTest, TheInverseHessianMeetsTheSecantConditionAfterAnUpdate) {
  const auto f = quadratic();
  SubspaceDescent descent(f.components, without_residual());
  auto loss_at = [&](const at::Tensor& t) { return f.loss(t); };
  const auto w0 = f.start;
  const auto w1 = descent.step(w0, f.gradient(w0), f.loss(w0), loss_at).weights;
  descent.step(w1, f.gradient(w1), f.loss(w1), loss_at);
  // B y = s for the pair of the first update: s = P (w1 - w0), y = P (g1 - g0).
  const auto s = at::mv(f.components, w1 - w0);
  const auto y = at::mv(f.components, f.gradient(w1) - f.gradient(w0));
  EXPECT_TRUE(at::allclose(at::mv(descent.inverse_hessian(), y), s, 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(descent.inverse_hessian(), descent.inverse_hessian().t(), 1e-5, 1e-6)) << "symmetric";
}

TEST(SubspaceDescentTest, MindSporesRuleTakesTheSmallestStepOnAFailedSearchAndKeepsTheCurvature) {
  const auto f = quadratic();
  SubspaceDescentSettings settings = without_residual();
  settings.safeguarded = false;
  SubspaceDescent descent(f.components, settings);
  int calls = 0;
  const auto w = f.start;
  const auto step = descent.step(w, f.gradient(w), f.loss(w), [&](const at::Tensor&) {
    ++calls;
    return std::numeric_limits<double>::infinity();
  });
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(step.trials, 3);
  EXPECT_FALSE(step.accepted);
  EXPECT_DOUBLE_EQ(step.step, 0.55 * 0.55);
  // The first direction is -P^T P g (B = I): the step is rho^2 along it.
  const auto expected = w - 0.55 * 0.55 * at::mv(f.components.t(), at::mv(f.components, f.gradient(w)));
  EXPECT_TRUE(at::allclose(step.weights, expected, 1e-5, 1e-6));
  // No accepted step, so no curvature pair: B stays the identity next time.
  descent.step(step.weights, f.gradient(step.weights), f.loss(step.weights),
               [&](const at::Tensor& t) { return f.loss(t); });
  EXPECT_TRUE(at::allclose(descent.inverse_hessian(), at::eye(3)));
}

TEST(SubspaceDescentTest, TheSafeguardedRuleTakesNoSubspaceStepOnAFailedSearchAndRestarts) {
  const auto f = quadratic();
  SubspaceDescent descent(f.components, without_residual());
  auto loss_at = [&](const at::Tensor& t) { return f.loss(t); };
  // One accepted update first, so B has learnt a curvature pair.
  const auto w1 = descent.step(f.start, f.gradient(f.start), f.loss(f.start), loss_at).weights;
  descent.step(w1, f.gradient(w1), f.loss(w1), loss_at);
  ASSERT_FALSE(at::allclose(descent.inverse_hessian(), at::eye(3)));
  const auto w2 = f.start * 0.5;
  const auto failed = descent.step(w2, f.gradient(w2), f.loss(w2),
                                   [](const at::Tensor&) { return std::numeric_limits<double>::infinity(); });
  EXPECT_FALSE(failed.accepted);
  EXPECT_EQ(failed.trials, 3);
  EXPECT_EQ(failed.step, 0.0);
  EXPECT_TRUE(at::equal(failed.weights, w2)) << "no residual step configured, so the weights stay";
  EXPECT_TRUE(at::allclose(descent.inverse_hessian(), at::eye(3))) << "B restarts from the identity";
  // The next update forms no pair across the step not taken: B stays I.
  descent.step(w2, f.gradient(w2), f.loss(w2), loss_at);
  EXPECT_TRUE(at::allclose(descent.inverse_hessian(), at::eye(3)));
}

// A pair whose y is nearly orthogonal to s (gradients of two different
// mini-batches) would make r = 1 / y.s huge; the safeguarded rule skips it.
TEST(SubspaceDescentTest, TheSafeguardedRuleSkipsACurvaturePairAtANearRightAngle) {
  const auto components = at::eye(2, at::kFloat);
  for (const bool safeguarded : {true, false}) {
    SubspaceDescentSettings settings = without_residual();
    settings.safeguarded = safeguarded;
    SubspaceDescent descent(components, settings);
    const auto loss_at = [](const at::Tensor& t) { return 0.5 * at::dot(t, t).item<double>(); };
    // g0 = (1, 0): B = I, the step s = -(1, 0) is accepted at m = 0 (f(0) = 0 < 0.5 - 0.4).
    const auto w0 = at::tensor({1.0f, 0.0f});
    const auto w1 = descent.step(w0, at::tensor({1.0f, 0.0f}), 0.5, loss_at).weights;
    // A second gradient whose change y = (-1e-3, 1) is at 89.94 degrees to s.
    descent.step(w1, at::tensor({0.999f, 1.0f}), 0.5, loss_at);
    EXPECT_EQ(at::allclose(descent.inverse_hessian(), at::eye(2)), safeguarded) << "safeguarded " << safeguarded;
  }
}

// The gradient outside the subspace moves the weights by alpha times its
// momentum: v1 = g, v2 = gamma g + g for a constant g.
TEST(SubspaceDescentTest, TheResidualGradientMovesTheWeightsWithMomentum) {
  const auto f = quadratic();
  SubspaceDescentSettings settings;  // alpha 0.001, gamma 0.9
  SubspaceDescent descent(f.components, settings);
  // A gradient orthogonal to the subspace: the search direction is zero.
  auto g = at::randn({12});
  g = g - at::mv(f.components.t(), at::mv(f.components, g));
  auto loss_at = [](const at::Tensor&) { return 0.0; };
  const auto w1 = descent.step(f.start, g, 1.0, loss_at).weights;
  const auto w2 = descent.step(w1, g, 1.0, loss_at).weights;
  EXPECT_TRUE(at::allclose(w1, f.start - 0.001 * g, 1e-5, 1e-7));
  EXPECT_TRUE(at::allclose(w2, w1 - 0.001 * (0.9 * g + g), 1e-5, 1e-7));
}

TEST(SubspaceDescentTest, AResumedDescentTakesTheSameStepsFromItsSavedState) {
  const auto f = quadratic();
  auto loss_at = [&](const at::Tensor& t) { return f.loss(t); };
  SubspaceDescent first(f.components, SubspaceDescentSettings{});
  auto w = f.start.clone();
  for (int i = 0; i < 3; ++i) w = first.step(w, f.gradient(w), f.loss(w), loss_at).weights;
  SubspaceDescent resumed(f.components, SubspaceDescentSettings{});
  resumed.load_state(first.state(), "a test checkpoint");
  const auto a = first.step(w, f.gradient(w), f.loss(w), loss_at).weights;
  const auto b = resumed.step(w, f.gradient(w), f.loss(w), loss_at).weights;
  EXPECT_TRUE(at::equal(a, b));
}

}  // namespace
}  // namespace orchestrate

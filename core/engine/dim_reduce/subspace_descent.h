// Stage 2 of dimension-reduce training: one update of the weights searched
// in the span of the trajectory's principal components.
//
// The rule is MindSpore Boost's DimReduce (mindspore/boost/dim_reduce.py,
// the class the seed's stage 2 runs with its SGD at learning rate 1), after
// Li et al., "Low Dimensional Trajectory Hypothesis is True: DNNs can be
// Trained in Tiny Subspaces" (IEEE TPAMI 2022), whose P-BFGS it extends with
// a momentum on the gradient left outside the subspace. With P the
// components (k x n, orthonormal rows), w the weights, g the gradient of the
// loss f at w (both length n):
//
//   g_k = P g                                   the gradient in the subspace
//   if an update came before: y = g_k - g_k_prev; if y.s > 1e-20:
//     r = 1 / (y.s);  T = I - r y s^T;  B <- T^T B T + r s s^T   (BFGS, inverse Hessian)
//   d_k = -B g_k;  d = P^T d_k                  the quasi-Newton direction, in full
//   line search: the first m in 0..2 with f(w + rho^m d) < f(w) + sigma rho^m (g_k . d_k);
//     then s = rho^m d_k; if none passes, the step is rho^2 and s stays as it was
//   v <- gamma v + (g - P^T g_k)                momentum of the gradient outside the subspace
//   w <- w + rho^m d - alpha v
//
// B starts as the identity and v as zero. f(w + rho^m d) is the loss of the
// same batch at the trial weights; in a data-parallel job f, g and the
// trial losses are the mean over ranks, so every rank takes the same step.
//
// The safeguarded rule ([dim_reduce] rule = "safeguarded", the default)
// differs in two places, because the rule above diverged on Fashion-MNIST
// (NaN after 66 updates): y and s come from different mini-batches, so y.s
// can be barely positive, r huge and B, and with it d, explode; the failed
// search then still takes rho^2 of that d. Instead:
//   - a pair updates B only when y.s > 0.01 |y| |s| (the angle between
//     them below about 89.4 degrees: real curvature, not noise);
//   - when no trial passes, the subspace step is 0 (only the residual
//     momentum moves the weights), B is reset to the identity and the next
//     update forms no pair: the standard restart of a quasi-Newton method
//     whose direction stopped descending.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/dim_reduce/dim_reduce_settings.h"

namespace orchestrate {

class SubspaceDescent {
 public:
  // `components`: float32 [k, n] with orthonormal rows, on the training device.
  SubspaceDescent(at::Tensor components, SubspaceDescentSettings settings);

  struct Step {
    at::Tensor weights;  // the new weights, [n]
    double step = 0;     // rho^m (0: the safeguarded rule took no subspace step)
    int trials = 0;      // losses evaluated by the line search
    bool accepted = false;  // a trial met the sufficient-decrease condition
  };
  // One update from `weights` (flat [n]) with `loss` and `gradient` (flat
  // [n]) there. `loss_at(trial)` returns the loss at trial weights.
  Step step(const at::Tensor& weights, const at::Tensor& gradient, double loss,
            const std::function<double(const at::Tensor&)>& loss_at);

  const at::Tensor& inverse_hessian() const { return inverse_hessian_; }

  // What a checkpoint must keep for a resumed stage 2 to take the same steps.
  std::vector<std::pair<std::string, at::Tensor>> state() const;
  void load_state(const std::vector<std::pair<std::string, at::Tensor>>& state, const std::string& source);

 private:
  at::Tensor components_;       // P [k, n]
  SubspaceDescentSettings settings_;
  at::Tensor inverse_hessian_;  // B [k, k]
  at::Tensor previous_gradient_;  // g_k of the last update [k]
  at::Tensor last_step_;          // s [k]
  at::Tensor residual_momentum_;  // v [n]
  bool has_previous_ = false;
};

}  // namespace orchestrate

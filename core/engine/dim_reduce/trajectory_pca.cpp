#include "engine/dim_reduce/trajectory_pca.h"

#include <ATen/ATen.h>

#include "orchestrate/error.h"

namespace orchestrate {

TrajectoryPca trajectory_pca(const at::Tensor& snapshots, std::int64_t n_components, const std::string& source) {
  if (snapshots.dim() != 2)
    throw Error("dim_reduce: the weight snapshots of " + source + " must form a matrix [snapshots, weights]");
  const std::int64_t t = snapshots.size(0);
  if (n_components < 1) throw UsageError("[dim_reduce] n_components must be at least 1");
  if (t <= n_components)
    throw UsageError("dim_reduce: n_components = " + std::to_string(n_components) + " needs at least " +
                     std::to_string(n_components + 1) + " weight snapshots, and " + source + " has " +
                     std::to_string(t) + "; save more in stage 1 ([snapshots] keep, every_epochs or every_steps) or "
                     "lower [dim_reduce] n_components");
  // float64 for the decomposition: the trajectory's later steps are small
  // differences of large weights, where float32 loses the directions' tails.
  const auto centred = snapshots.to(at::kDouble) - snapshots.to(at::kDouble).mean(0, /*keepdim=*/true);
  const auto [u, singular, vh] = at::linalg_svd(centred, /*full_matrices=*/false);
  auto components = vh.narrow(0, 0, n_components).clone();
  const auto largest = components.abs().argmax(1, /*keepdim=*/true);
  components *= components.gather(1, largest).sign();
  const auto variance = singular.square();
  const auto total = variance.sum();
  const auto ratio = total.item<double>() > 0 ? variance.narrow(0, 0, n_components) / total
                                              : at::zeros({n_components}, variance.options());
  return {components.to(at::kFloat).contiguous(), ratio.to(at::kFloat)};
}

}  // namespace orchestrate

// Stage 2 of dimension-reduce training starts here: the principal directions
// of the weight trajectory that stage 1's snapshots recorded. Training then
// moves the weights (mostly) inside the span of these few directions.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace orchestrate {

struct TrajectoryPca {
  at::Tensor components;                // float32 [k, n]: orthonormal rows, by decreasing variance
  at::Tensor explained_variance_ratio;  // float32 [k]: each component's share of the trajectory's variance
};

// `snapshots` is float [t, n], one flattened weight vector per row. They are
// centred on their mean and decomposed by SVD; the first `n_components` right
// singular vectors are the components. Centring leaves rank t - 1 at most, so
// t must exceed n_components: an Error otherwise, naming `source` (where the
// snapshots came from) and how to get more. Each component's sign is fixed
// (its largest-magnitude entry positive), so the result does not depend on
// the LAPACK build.
TrajectoryPca trajectory_pca(const at::Tensor& snapshots, std::int64_t n_components, const std::string& source);

}  // namespace orchestrate

// Dimension-reduce training's settings, apart from its tensors, so that the
// typed recipe settings hold them without LibTorch's headers.
#pragma once

#include <cstdint>
#include <string>

namespace orchestrate {

// The line search and quasi-Newton rule of stage 2 (subspace_descent.h); its
// defaults are the seed's, which the recipe's [dim_reduce] keys take.
struct SubspaceDescentSettings {
  double rho = 0.55;    // the line search's step factor
  double gamma = 0.9;   // momentum of the residual gradient
  double alpha = 0.001; // step along the residual momentum
  double sigma = 0.4;   // sufficient decrease (Armijo) constant
  int max_search = 3;   // line-search trials: steps 1, rho, rho^2
  bool safeguarded = true;  // false: MindSpore's rule as written (see above)
};

// The recipe's [snapshots] (core_settings_tables.cpp, where the defaults are).
struct SnapshotPolicy {
  std::int64_t every_steps{};   // 0: off
  std::int64_t every_epochs{};  // 0: off
  std::int64_t from_epoch{};    // the first (1-based) epoch that saves: early weights are far from the final basin
  std::int64_t keep{};          // the newest N; 0: all
  bool enabled() const { return every_steps > 0 || every_epochs > 0; }
};

// Filled from the recipe's [dim_reduce] (core_settings_tables.cpp, where
// the defaults are).
struct DimReduceSettings {
  bool enabled{};
  std::string snapshots;     // stage 1's snapshot directory
  std::int64_t from_epoch{};  // the epoch (1-based) stage 2 starts at; > 1: stage 1 in the same run before it
  std::string pca_mat_path;  // load when it exists; else computed and saved there ("": the run's artifacts)
  std::int64_t n_components{};
  SubspaceDescentSettings search;
};

}  // namespace orchestrate

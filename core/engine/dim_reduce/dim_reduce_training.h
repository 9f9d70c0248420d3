// Stage 2 of dimension-reduce training wired to a model's trainable
// parameters: the PCA matrix (loaded, or computed from stage 1's snapshots
// and saved), and each update taken by SubspaceDescent in place of the
// optimizer's step.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>

#include "engine/dim_reduce/dim_reduce_settings.h"
#include "engine/dim_reduce/subspace_descent.h"
#include "engine/dim_reduce/weight_snapshots.h"

namespace orchestrate {

class DimReduceTraining {
 public:
  // Makes a tensor rank 0's on every rank; does nothing when training alone.
  using Broadcast = std::function<void(at::Tensor&)>;

  // On rank 0 (`leader`) loads the PCA matrix from settings.pca_mat_path when
  // that file exists (or, `resuming`, from `default_pca_path`, where the run
  // saved its own), else computes the PCA of the snapshots and saves it to
  // the path given or the default one; the others receive it through `broadcast`, so every
  // rank projects with the same matrix. `describe` gets a line saying what
  // was done (for the run's events).
  DimReduceTraining(const DimReduceSettings& settings, NamedParameters parameters, const Broadcast& broadcast,
                    bool leader, const std::string& default_pca_path, bool resuming,
                    const std::function<void(const std::string&)>& describe);

  // One update from the gradients in the parameters' grad() (already the
  // mean over ranks) and the batch's `loss` there. `loss_of_batch()` returns
  // the loss of the same batch at the parameters' current values (the mean
  // over ranks); it is called with the trial weights of the line search in
  // place. Leaves the parameters at the new weights.
  SubspaceDescent::Step update(double loss, const std::function<double()>& loss_of_batch);

  // The quasi-Newton state, for checkpoints (see SubspaceDescent::state).
  std::vector<std::pair<std::string, at::Tensor>> state() const { return descent_->state(); }
  void load_state(const std::vector<std::pair<std::string, at::Tensor>>& state, const std::string& source) {
    descent_->load_state(state, source);
  }

 private:
  at::Tensor flat_weights() const;
  at::Tensor flat_gradient() const;
  void assign(const at::Tensor& flat);

  NamedParameters parameters_;
  std::int64_t weights_ = 0;
  std::unique_ptr<SubspaceDescent> descent_;
};

// The PCA matrix file: safetensors with "components" [k, n] and
// "explained_variance_ratio" [k].
void write_pca_matrix(const std::string& path, const at::Tensor& components, const at::Tensor& explained);
at::Tensor read_pca_matrix(const std::string& path, std::int64_t weights);

}  // namespace orchestrate

#include "engine/dim_reduce/dim_reduce_training.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <filesystem>
#include <iomanip>
#include <memory>
#include <sstream>

#include "checkpoint/safetensors.h"
#include "engine/dim_reduce/trajectory_pca.h"
#include "orchestrate/error.h"

namespace orchestrate {

void write_pca_matrix(const std::string& path, const at::Tensor& components, const at::Tensor& explained) {
  if (const auto parent = std::filesystem::path(path).parent_path(); !parent.empty())
    std::filesystem::create_directories(parent);
  write_safetensors(path, {{{"components", components}, {"explained_variance_ratio", explained}},
                           {{"format", "orchestrate dim_reduce PCA matrix"}}});
}

at::Tensor read_pca_matrix(const std::string& path, std::int64_t weights) {
  for (auto& [name, tensor] : read_safetensors(path).tensors) {
    if (name != "components") continue;
    if (tensor.dim() != 2 || tensor.size(1) != weights)
      throw DataError(path + ": the PCA matrix is for " + (tensor.dim() == 2 ? std::to_string(tensor.size(1)) : "?") +
                      " weights and the model trains " + std::to_string(weights) +
                      "; give the matrix made from this model's snapshots, or leave [dim_reduce] pca_mat_path "
                      "empty to compute it");
    return tensor.to(at::kFloat);
  }
  throw DataError(path + ": no 'components' tensor; not a PCA matrix written by orchestrate's dim_reduce");
}

DimReduceTraining::DimReduceTraining(const DimReduceSettings& settings, NamedParameters parameters,
                                     const Broadcast& broadcast, bool leader, const std::string& default_pca_path,
                                     bool resuming,
                                     const std::function<void(const std::string&)>& describe)
    : parameters_(std::move(parameters)) {
  for (const auto& [name, tensor] : parameters_) weights_ += tensor.numel();
  const std::string pca_path = settings.pca_mat_path.empty() ? default_pca_path : settings.pca_mat_path;
  const auto device = parameters_.front().second.device();
  at::Tensor components = at::zeros({settings.n_components, weights_}, at::kFloat);
  if (leader) {
    std::ostringstream said;
    // The default path is keyed by run id, which another store in the same
    // directory may also use: only the run that saved it there reuses it.
    const bool reuse = !settings.pca_mat_path.empty() || resuming;
    if (reuse && std::filesystem::exists(pca_path)) {
      components = read_pca_matrix(pca_path, weights_);
      said << "loaded the PCA matrix " << pca_path << ": " << components.size(0) << " components of "
           << weights_ << " weights";
    } else {
      const auto trajectory = read_trajectory(settings.snapshots, parameters_);
      const auto pca = trajectory_pca(trajectory, settings.n_components,
                                      settings.snapshots + " (" + std::to_string(trajectory.size(0)) + " snapshots)");
      components = pca.components;
      write_pca_matrix(pca_path, pca.components, pca.explained_variance_ratio);
      said << "PCA of " << trajectory.size(0) << " weight snapshots in " << settings.snapshots << ": "
           << settings.n_components << " components of " << weights_ << " weights explain " << std::fixed
           << std::setprecision(1) << 100.0 * pca.explained_variance_ratio.sum().item<double>()
           << " % of the trajectory's variance; saved to " << pca_path;
    }
    describe(said.str());
  }
  if (components.size(0) != settings.n_components)
    throw DataError(pca_path + ": the PCA matrix has " + std::to_string(components.size(0)) +
                    " components and [dim_reduce] n_components is " + std::to_string(settings.n_components) +
                    "; set n_components to match, or leave pca_mat_path empty to compute a new one");
  components = components.to(device);
  broadcast(components);
  descent_ = std::make_unique<SubspaceDescent>(components, settings.search);
}

at::Tensor DimReduceTraining::flat_weights() const {
  std::vector<at::Tensor> pieces;
  for (const auto& [name, tensor] : parameters_) pieces.push_back(tensor.detach().reshape({-1}).to(at::kFloat));
  return at::cat(pieces);
}

// A parameter the loss did not reach has no gradient: zero, as for any optimizer.
at::Tensor DimReduceTraining::flat_gradient() const {
  std::vector<at::Tensor> pieces;
  for (const auto& [name, tensor] : parameters_)
    pieces.push_back(tensor.grad().defined() ? tensor.grad().reshape({-1}).to(at::kFloat)
                                             : at::zeros({tensor.numel()}, tensor.options().dtype(at::kFloat)));
  return at::cat(pieces);
}

void DimReduceTraining::assign(const at::Tensor& flat) {
  torch::NoGradGuard no_grad;
  std::int64_t offset = 0;
  for (auto& [name, tensor] : parameters_) {
    tensor.detach().copy_(flat.narrow(0, offset, tensor.numel()).view(tensor.sizes()));
    offset += tensor.numel();
  }
}

SubspaceDescent::Step DimReduceTraining::update(double loss, const std::function<double()>& loss_of_batch) {
  const auto weights = flat_weights();
  auto step = descent_->step(weights, flat_gradient(), loss, [&](const at::Tensor& trial) {
    assign(trial);
    torch::NoGradGuard no_grad;
    return loss_of_batch();
  });
  assign(step.weights);
  return step;
}

}  // namespace orchestrate

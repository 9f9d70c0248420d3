// What a checkpoint must hold besides the weights for a resumed run to take
// exactly the steps the uninterrupted run would have taken: optimizer,
// wrapper and loss-scaler state, RNG states, and the gradients of an update
// whose micro-batches were only partly accumulated.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>

#include "orchestrate/model.h"
#include "orchestrate/optimizer_wrapper.h"
#include "orchestrate/stateful.h"
#include "precision/loss_scaler.h"
#include "safetensors.h"

namespace orchestrate {

// Parameters then buffers, by their module names: the model's state dict.
NamedTensors model_state(const torch::nn::Module& model);

// Copies `weights` into the model, which must hold exactly those names and
// shapes (a resume). Errors name the checkpoint and the first mismatch.
void load_model_state(torch::nn::Module& model, const NamedTensors& weights, const std::string& source);

// The optimizer-side state, by reference to the live objects.
struct TrainerStateRefs {
  torch::optim::Optimizer& optimizer;
  std::vector<std::unique_ptr<OptimizerWrapper>>& wrappers;
  LossScaler& scaler;
  const std::vector<at::Tensor>& parameters;  // in optimizer order; their .grad() is saved mid-accumulation
  at::Tensor& partial_loss;                   // loss summed over the micro-batches so far; undefined at m = 0
  std::int64_t& skipped_updates;
  double& eval_seconds;
  // The gradient compressor's state of every rank, flattened (rank r at
  // index r; see flatten_state); empty without a compressor. Saved as is;
  // loading fills in what the checkpoint holds.
  std::vector<at::Tensor>& compression_by_rank;
  // Dimension-reduce stage 2's quasi-Newton state by name (the same on every
  // rank); empty without [dim_reduce]. Loading reads the names it holds.
  std::vector<std::pair<std::string, at::Tensor>>& dim_reduce_state;
  // The parts that keep their own state (orchestrate/stateful.h), by a name
  // unique in the run ("hooks.0.profile"): each saved as a section of its
  // own, and loaded when the checkpoint has one.
  std::vector<std::pair<std::string, Stateful*>> parts = {};
};

// A gradient compressor's state as one flat tensor, in name order: what the
// ranks all-gather and a checkpoint keeps per rank.
at::Tensor flatten_state(const std::map<std::string, at::Tensor>& state);
// Splits `flat` into tensors shaped like `like`'s; an error when the sizes
// differ (a checkpoint saved with other compression settings).
std::map<std::string, at::Tensor> unflatten_state(const at::Tensor& flat, const std::map<std::string, at::Tensor>& like);

// Serialized LibTorch archive of the state; `with_gradients` when the
// checkpoint is taken between two micro-batches of one update.
std::string save_trainer_state(const TrainerStateRefs& state, bool with_gradients);

// Restores everything save_trainer_state wrote, RNG states included.
void load_trainer_state(const std::string& path, const TrainerStateRefs& state, bool with_gradients);

}  // namespace orchestrate

// Transfer learning: start a model from another run's weights
// ([checkpoint] init_from), leaving out the tensors that must be learnt anew
// (exclude, e.g. the classifier head), and freezing the layers that must not
// move (trainable / frozen).
#pragma once

#include <string>
#include <vector>

#include "engine/recipe/settings.h"
#include "orchestrate/model.h"
#include "store/run_records.h"

namespace orchestrate {

// How the tensors of a weights file fit a model. Every tensor of either has
// a record: loaded, excluded, missing (from the file), unexpected (not in
// the model) or mismatched (in shape).
struct WeightsFit {
  std::vector<TensorRecord> records;
  std::vector<std::string> missing, unexpected, mismatched;  // mismatched: "'fc.weight' (file [5, 84], model [10, 84])"
  bool complete() const { return missing.empty() && unexpected.empty() && mismatched.empty(); }
  // "shape mismatch: ...; missing from the file: ...; not in the model: ...", a few names of each.
  std::string problems() const;
};

// Copies the tensors of the safetensors `file` that fit `model` (by name and
// shape) into it, leaving out those matching a glob of `exclude`.
WeightsFit load_fitting_weights(torch::nn::Module& model, const std::string& file,
                                const std::vector<std::string>& exclude);

// Loads [checkpoint] init_from into `model`. Every tensor of the model and
// of the file gets a record: loaded, excluded, missing, unexpected or
// mismatched. With strict, any missing, unexpected or mismatched tensor is
// an Error listing them all; otherwise they are kept as warnings in the
// records. `logits_pattern` is what "@logits" stands for.
std::vector<TensorRecord> initialize_from(torch::nn::Module& model, const CheckpointSettings& settings,
                                          const std::string& logits_pattern);

// Applies trainable / frozen: frozen parameters stop requiring gradients, so
// the optimizer never sees them (and keeps no state for them). A pattern
// that matches no parameter is an Error (a typo would freeze nothing).
std::vector<TensorRecord> freeze_parameters(torch::nn::Module& model, const CheckpointSettings& settings,
                                            const std::string& logits_pattern);

// The weights file behind init_from: the checkpoint's model.safetensors, or
// the .safetensors file itself. Errors say what the path is instead.
std::string weights_file_of(const std::string& checkpoint_or_file, const std::string& what);

}  // namespace orchestrate

// Optimizers are torch::optim::Optimizer subclasses built by an OptimizerFactory
// (see registry.h) from the parameter groups the host forms.
//
// The contract (checked by the conformance test):
//   - one torch param group per OptimizerContext group, in the same order;
//   - group i starts at lr = params.real("lr") * groups[i].lr_scale and
//     applies groups[i].weight_decay, as the optimizer defines weight decay;
//   - every schema declares a real `lr`: the host reads it as the base lr
//     the schedule scales;
//   - the trainer sets group i's lr to schedule(step) * groups[i].lr_scale
//     before each update, so step() must honour OptimizerOptions::set_lr.
#pragma once

#include <torch/optim/optimizer.h>

#include <string>
#include <vector>

#include "orchestrate/registry.h"

namespace orchestrate {

struct NamedParameter {
  std::string name;  // the module path, e.g. "features.0.weight"
  at::Tensor tensor;
};

// Parameters that share a learning-rate multiplier and a weight decay.
struct ParameterGroup {
  std::string label;  // "decay", "no_decay", "groups.0": how the host chose them
  std::vector<NamedParameter> parameters;
  double lr_scale = 1.0;      // multiplies the base lr (and the schedule's lr)
  double weight_decay = 0.0;  // the coefficient this group gets; 0 for biases and norms by default
  // Biases and normalization parameters: layer-wise adaptation (LARS, LAMB
  // trust ratios) leaves them alone, as the MLPerf LARS reference does.
  bool exclude_from_layer_adaptation = false;
};

// What an optimizer factory is given. Grows only at the end.
struct OptimizerContext {
  std::vector<ParameterGroup> groups;  // never empty; no group is empty
};

// An optimizer that can skip a step on the device. Before step() the host
// may hand it `found_inf`, a 0-dim float32 tensor on the parameters' device
// holding exactly 0 or 1 (ATen's fused kernels skip at 1.0 only); where it
// holds 1, that step() must leave the parameters and every state, step
// counts included, as they were, without reading the flag on the host.
// ATen's fused kernels (_fused_sgd_, _fused_adam_, _fused_adagrad_) take it
// as their found_inf argument, as torch.amp.GradScaler steps a fused
// torch.optim optimizer. An fp16 update then never waits for the device.
// An optimizer without it is stepped only after the host has read the flag.
class ORCHESTRATE_API SkipsOnDevice {
 public:
  virtual ~SkipsOnDevice();
  // Applies to the next step() only.
  virtual void skip_next_step_if(const at::Tensor& found_inf) = 0;
};

// The tensors of one group, for building torch param groups.
ORCHESTRATE_API std::vector<at::Tensor> tensors_of(const ParameterGroup& group);

// torch param groups for `context`, one per group, each with a copy of
// `options` whose lr is scaled by the group's lr_scale and whose weight decay
// is the group's. Works for every torch options type with a weight_decay().
template <class Options>
std::vector<torch::optim::OptimizerParamGroup> make_param_groups(const OptimizerContext& context,
                                                                 const Options& options) {
  std::vector<torch::optim::OptimizerParamGroup> out;
  for (const auto& group : context.groups) {
    auto group_options = std::make_unique<Options>(options);
    group_options->lr(options.lr() * group.lr_scale);
    group_options->weight_decay(group.weight_decay);
    out.emplace_back(tensors_of(group), std::move(group_options));
  }
  return out;
}

}  // namespace orchestrate

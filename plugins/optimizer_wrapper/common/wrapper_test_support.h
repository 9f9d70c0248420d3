// Test helpers shared by the wrapper plugins' tests: parameter groups, a base
// optimizer built the way the host builds it for a wrapper that takes over
// weight decay, and one update driven in the host's order.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "orchestrate/optimizer.h"
#include "orchestrate/optimizer_wrapper.h"
#include "orchestrate/testing/plugin_under_test.h"

namespace orchestrate::testing {

inline ParameterGroup parameter_group(const std::string& label, const std::vector<at::Tensor>& tensors,
                                      double weight_decay, bool exclude_from_layer_adaptation,
                                      double lr_scale = 1.0) {
  ParameterGroup group;
  group.label = label;
  for (std::size_t i = 0; i < tensors.size(); ++i)
    group.parameters.push_back({label + "." + std::to_string(i), tensors[i]});
  group.weight_decay = weight_decay;
  group.exclude_from_layer_adaptation = exclude_from_layer_adaptation;
  group.lr_scale = lr_scale;
  return group;
}

// One torch param group per context group, lr scaled, weight decay 0: the
// host's base optimizer when a wrapper declares takes_over_weight_decay.
template <class Optimizer, class Options>
std::unique_ptr<Optimizer> base_optimizer_without_decay(const WrapperContext& context, const Options& options) {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  for (const auto& group : context.groups) {
    auto group_options = std::make_unique<Options>(options);
    group_options->lr(options.lr() * group.lr_scale);
    group_options->weight_decay(0.0);
    groups.emplace_back(tensors_of(group), std::move(group_options));
  }
  return std::make_unique<Optimizer>(std::move(groups), options);
}

inline std::unique_ptr<OptimizerWrapper> make_wrapper(const std::string& name, const Params& params,
                                                      const WrapperContext& context) {
  return plugin_under_test().optimizer_wrappers().get(name).create(params, context);
}

inline Params default_wrapper_params(const std::string& name) {
  return default_params(plugin_under_test().optimizer_wrappers().get(name).info.schema);
}

// One update in the host's order: before_step, the base step, after_step.
// Returns the metrics the wrapper logged. With `skip_flag` (0 or 1) it is
// the update of an optimizer skipping on the device: the wrapper sees the
// flag, and at 1 the base optimizer does not step.
inline std::map<std::string, at::Tensor> run_update(OptimizerWrapper& wrapper, torch::optim::Optimizer& optimizer,
                                                    std::int64_t update = 0, const at::Tensor& skip_flag = {}) {
  std::map<std::string, at::Tensor> metrics;
  UpdateView view{optimizer, metrics, update, skip_flag};
  wrapper.before_step(view);
  if (!skip_flag.defined() || skip_flag.item<double>() == 0) optimizer.step();
  wrapper.after_step(view);
  return metrics;
}

}  // namespace orchestrate::testing

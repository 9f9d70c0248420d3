// LARS: layer-wise adaptive rate scaling (You, Gitman, Ginsburg 2017,
// https://arxiv.org/abs/1708.03888), as the MLPerf ResNet-50 reference does
// it (mlcommons/training image_classification/tensorflow2/lars_optimizer.py)
// and as MoXing's 32k-batch ResNet-50 recipe uses it: trust coefficient
// 0.001, weight decay inside LARS, momentum as the base optimizer.
//
// For each tensor w with gradient g in a group that takes layer adaptation:
//   trust = eta * ||w|| / (||g|| + wd * ||w|| + epsilon)   (1 if a norm is 0)
//   g    <- trust * (g + wd * w)
// and the base optimizer then steps with the group's lr. With a momentum
// base this is the reference's update whenever the lr is constant; when the
// schedule moves the lr, the base optimizer's own convention decides whether
// the momentum buffer holds lr * g (TensorFlow) or g (PyTorch).
//
// Groups excluded from adaptation (biases, norms) keep their gradient; the
// group's weight decay, 0 for them by default as in the reference's skip
// list, is still added as plain L2 so a recipe that sets one is honoured.
#include <ATen/ATen.h>

#include <memory>
#include <utility>
#include <vector>

#include "../common/trust_ratio.h"
#include "../common/update_tensors.h"
#include "orchestrate/optimizer_wrapper.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"

namespace {

using namespace orchestrate::wrapper_support;
using orchestrate::ParameterGroup;
using orchestrate::Params;
using orchestrate::UpdateView;

struct LarsSettings {
  double eta = 0.001;
  double epsilon = 0.0;
  bool clip = false;  // LARC's clip mode: the local lr never exceeds the global one
};

class Lars final : public orchestrate::OptimizerWrapper {
 public:
  Lars(LarsSettings settings, std::vector<ParameterGroup> groups)
      : settings_(settings), groups_(std::move(groups)) {}

  void before_step(UpdateView& view) override {
    check_same_groups(view.optimizer, groups_.size(), "lars");
    at::NoGradGuard no_grad;
    std::vector<at::Tensor> ratios;
    for (std::size_t index = 0; index < groups_.size(); ++index) {
      const auto& group = groups_[index];
      const auto parameters = parameters_with_gradients(group);
      if (parameters.empty()) continue;
      auto gradients = gradients_of(parameters);
      if (group.exclude_from_layer_adaptation) {
        if (group.weight_decay != 0) at::_foreach_add_(gradients, parameters, group.weight_decay);
        continue;
      }
      ratios.push_back(adapt(parameters, gradients, group.weight_decay, learning_rate_of(view.optimizer, index)));
    }
    log_mean_ratio(view.metrics, "train/lars_trust_ratio", ratios);
  }

 private:
  // Rewrites `gradients` in place; returns the trust ratio of each tensor.
  at::Tensor adapt(const std::vector<at::Tensor>& parameters, std::vector<at::Tensor>& gradients,
                   double weight_decay, double lr) const {
    const auto weight_norms = l2_norms(parameters);
    const auto gradient_norms = l2_norms(gradients);
    auto ratio = settings_.eta * weight_norms / (gradient_norms + weight_decay * weight_norms + settings_.epsilon);
    // LARC (NVIDIA apex) caps the local lr, lr * trust, at lr; applied before
    // the guard so a tensor with a zero norm still takes the plain step.
    if (settings_.clip) ratio = at::clamp_max(ratio / lr, 1.0);
    ratio = ratio_where_norms_positive(weight_norms, gradient_norms, ratio);
    if (weight_decay != 0) at::_foreach_add_(gradients, parameters, weight_decay);
    at::_foreach_mul_(gradients, ratio.unbind(0));  // one 0-dim factor per tensor, still on the device
    return ratio;
  }

  LarsSettings settings_;
  std::vector<ParameterGroup> groups_;
};

std::unique_ptr<orchestrate::OptimizerWrapper> make_lars(const Params& params,
                                                         const orchestrate::WrapperContext& context) {
  const LarsSettings settings{params.real("eta"), params.real("epsilon"), params.boolean("clip")};
  return std::make_unique<Lars>(settings, context.groups);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  ParamSchema schema{
      real_param("eta", 0.001,
                 "trust coefficient: a tensor's step is about eta * ||w|| / ||g|| of its gradient step "
                 "(MoXing's `ratio`, the MLPerf reference's `eeta`)")
          .greater_than(0),
      real_param("epsilon", 0.0,
                 "added to the trust ratio's denominator; the MLPerf reference's default is 0 (its TF2 port "
                 "turns 0 into Keras' 1e-7)")
          .at_least(0),
      bool_param("clip", false, "LARC clip mode: scale gradients by min(trust / lr, 1), so lr * trust never exceeds lr"),
  };
  WrapperRules rules;
  rules.must_come_last = true;  // it scales the final gradient, just before the base optimizer
  rules.exclusive_group = "trust_ratio";
  rules.takes_over_weight_decay = true;  // weight decay inside LARS: the base optimizer must not decay again
  rules.only_rewrites_gradients = true;
  registry.optimizer_wrappers().add(
      "lars", "layer-wise adaptive rate scaling (LARS/LARC): per-tensor trust ratio on gradient + weight decay",
      std::move(schema), make_lars, std::move(rules));
}

}  // namespace

ORCHESTRATE_PLUGIN("lars", "1.0.0", register_components)

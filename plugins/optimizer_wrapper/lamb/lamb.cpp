// LAMB: the layer-wise trust ratio applied to the base optimizer's update
// (You et al. 2019, "Large Batch Optimization for Deep Learning: Training
// BERT in 76 minutes", https://arxiv.org/abs/1904.00962, Algorithm 2).
//
// With the base optimizer `adam` (bias-corrected, weight decay 0, which the
// host arranges because this wrapper takes over weight decay) this is LAMB:
//   r = m_hat / (sqrt(v_hat) + eps) + wd * w
//   w <- w - lr * (||w|| / ||r||) * r          (ratio 1 if a norm is 0)
// with phi the identity, as in the paper's experiments. Over another base
// optimizer it is the same trust ratio over that optimizer's step.
//
// The ratio needs the base optimizer's update, which only exists after its
// step, so: before_step snapshots the weights; after_step recovers the
// update u = w_after - w_before, forms r = -u / lr + wd * w_before and
// redoes the step with the ratio. Recovering u by subtraction costs about
// eps_float * ||w|| / ||u|| of relative precision in r (1e-5 for float32
// weights of norm 1 moving by 1e-2), well under the noise of a large batch.
//
// Groups excluded from adaptation (biases, norms) take the base step as it
// is; the group's weight decay, 0 for them by default, is applied decoupled
// (AdamW's w *= 1 - lr * wd before the step) so a recipe that sets one is honoured.
//
// On an update the optimizer skips on the device (UpdateView::skip_flag),
// both the decay and the rescaled step are multiplied by 1 - flag, so the
// weights stay exactly as they were and nothing is read on the host.
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

class Lamb final : public orchestrate::OptimizerWrapper {
 public:
  explicit Lamb(std::vector<ParameterGroup> groups) : groups_(std::move(groups)) {}

  void before_step(UpdateView& view) override {
    check_same_groups(view.optimizer, groups_.size(), "lamb");
    at::NoGradGuard no_grad;
    snapshots_.clear();
    // 1 on an update that is stepped, 0 on one the device skips.
    stepped_ = view.skip_flag.defined() ? 1 - view.skip_flag : at::Tensor();
    for (std::size_t index = 0; index < groups_.size(); ++index) {
      const auto& group = groups_[index];
      const double lr = learning_rate_of(view.optimizer, index);
      auto parameters = parameters_with_gradients(group);
      if (parameters.empty() || lr == 0) continue;  // lr 0: the base step and LAMB's are both no-ops
      if (group.exclude_from_layer_adaptation) {
        if (group.weight_decay == 0) continue;
        if (stepped_.defined()) {  // the host's factor in the weights' dtype, or exactly 1
          const auto stepped = stepped_.to(parameters.front().scalar_type());
          at::_foreach_mul_(parameters, stepped * (1.0 - lr * group.weight_decay) + (1 - stepped));
        } else {
          at::_foreach_mul_(parameters, 1.0 - lr * group.weight_decay);
        }
        continue;
      }
      auto weights_before = at::_foreach_mul(parameters, 1.0);  // a copy, in one multi-tensor kernel
      snapshots_.push_back({index, std::move(parameters), std::move(weights_before)});
    }
  }

  void after_step(UpdateView& view) override {
    at::NoGradGuard no_grad;
    std::vector<at::Tensor> ratios;
    for (auto& snapshot : snapshots_) {
      const double lr = learning_rate_of(view.optimizer, snapshot.group);
      const double weight_decay = groups_[snapshot.group].weight_decay;
      // r = (w_before - w_after) / lr + wd * w_before: the base update per unit lr, plus decay.
      auto update = at::_foreach_sub(snapshot.weights_before, snapshot.parameters);
      at::_foreach_div_(update, lr);
      if (weight_decay != 0) at::_foreach_add_(update, snapshot.weights_before, weight_decay);
      const auto weight_norms = l2_norms(snapshot.weights_before);
      const auto update_norms = l2_norms(update);
      const auto ratio = ratio_where_norms_positive(weight_norms, update_norms, weight_norms / update_norms);
      // w = w_before - lr * ratio * r, built in `update` and copied over the base step.
      at::_foreach_mul_(update, (stepped_.defined() ? ratio * -lr * stepped_ : ratio * -lr).unbind(0));
      at::_foreach_add_(update, snapshot.weights_before);
      at::_foreach_copy_(snapshot.parameters, update);
      ratios.push_back(ratio);
    }
    snapshots_.clear();  // the copies are a model's worth of memory; free them until the next update
    log_mean_ratio(view.metrics, "train/lamb_trust_ratio", ratios);
  }

 private:
  struct Snapshot {
    std::size_t group;
    std::vector<at::Tensor> parameters;      // those with a gradient this update
    std::vector<at::Tensor> weights_before;  // their values before the base step
  };

  std::vector<ParameterGroup> groups_;
  std::vector<Snapshot> snapshots_;
  at::Tensor stepped_;  // 1 - the update's skip flag; undefined when the host decides
};

std::unique_ptr<orchestrate::OptimizerWrapper> make_lamb(const Params&, const orchestrate::WrapperContext& context) {
  return std::make_unique<Lamb>(context.groups);
}

void register_components(orchestrate::Registry& registry) {
  using namespace orchestrate;
  WrapperRules rules;
  rules.must_come_last = true;  // it rescales the base optimizer's own step
  rules.exclusive_group = "trust_ratio";
  rules.takes_over_weight_decay = true;  // decay goes inside the trust ratio, so the base must not decay
  rules.honours_skip_flag = true;
  registry.optimizer_wrappers().add(
      "lamb", "layer-wise trust ratio ||w|| / ||update + wd * w|| over the base step (LAMB with base adam)",
      ParamSchema{}, make_lamb, std::move(rules));
}

}  // namespace

ORCHESTRATE_PLUGIN("lamb", "1.0.0", register_components)

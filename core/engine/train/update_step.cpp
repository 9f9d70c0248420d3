#include "engine/train/update_step.h"

#include <ATen/ATen.h>

#include <cmath>

namespace orchestrate {

UpdateStep::UpdateStep(TrainingComponents& components, NonFinitePolicy on_nonfinite, const RunRecorder& recorder)
    : c_(components), on_nonfinite_(on_nonfinite), recorder_(recorder) {
  for (const auto& group : c_.groups)
    for (const auto& parameter : group.parameters) parameters_.push_back(parameter.tensor);
}

// Components built by hand (tests) may name no sites.
const PluginCallSite& UpdateStep::wrapper_site(std::size_t i) const {
  static const PluginCallSite unnamed;
  return i < c_.sites.wrappers.size() ? c_.sites.wrappers[i] : unnamed;
}

bool UpdateStep::skips_for_loss(const at::Tensor& loss) const {
  return on_nonfinite_ == NonFinitePolicy::skip && !std::isfinite(loss.item<double>());
}

void UpdateStep::apply(const at::Tensor& loss, double lr, std::int64_t update, std::int64_t epoch,
                       PrecisionPolicy& precision, DimReduceStage& stage2, const DimReduceStage::BatchLoss& loss_of) {
  std::string skip_reason = precision.unscale(parameters_);
  // "skip" must know before stepping: one read of the loss (free on CPU).
  if (skip_reason.empty() && skips_for_loss(loss)) skip_reason = "loss is not finite";
  if (skip_reason.empty()) {
    auto& groups = c_.optimizer->param_groups();
    for (std::size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lr * c_.groups[i].lr_scale);
    if (stage2.active()) {
      stage2.step(loss, loss_of, metrics_);
    } else {
      UpdateView view{*c_.optimizer, metrics_, update};
      for (std::size_t i = 0; i < c_.wrappers.size(); ++i) {
        const PluginCallScope in_wrapper(wrapper_site(i), "before_step");
        c_.wrappers[i]->before_step(view);
      }
      {
        const PluginCallScope in_optimizer(c_.sites.optimizer, "step");
        c_.optimizer->step();
      }
      for (std::size_t i = c_.wrappers.size(); i-- > 0;) {
        const PluginCallScope in_wrapper(wrapper_site(i), "after_step");
        c_.wrappers[i]->after_step(view);
      }
    }
  } else {
    ++skipped_;
    recorder_.event("skipped_update",
                        "update " + std::to_string(update + 1) + " (epoch " + std::to_string(epoch + 1) +
                            ") skipped: " + skip_reason);
  }
  precision.end_update();
  c_.optimizer->zero_grad();
}

StateDict UpdateStep::state_dict() const { return {{"skipped_updates", at::scalar_tensor(skipped_, at::kLong)}}; }

void UpdateStep::load_state_dict(const StateDict& state) {
  if (const auto it = state.find("skipped_updates"); it != state.end()) skipped_ = it->second.item<std::int64_t>();
}

}  // namespace orchestrate

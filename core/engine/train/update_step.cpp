#include "engine/train/update_step.h"

#include <ATen/ATen.h>

#include <cmath>

namespace orchestrate {

UpdateStep::UpdateStep(TrainingComponents& components, NonFinitePolicy on_nonfinite, const RunRecorder& recorder)
    : c_(components),
      on_nonfinite_(on_nonfinite),
      recorder_(recorder),
      skipper_(components.device_skip_blocker.empty() ? dynamic_cast<SkipsOnDevice*>(components.optimizer.get())
                                                      : nullptr) {
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
  const at::Tensor found_inf = precision.unscale(parameters_);
  const bool may_skip = found_inf.defined() || on_nonfinite_ == NonFinitePolicy::skip;
  // Stage 2 of dimension-reduce training steps its own way, after a host check.
  const bool on_device = may_skip && skipper_ != nullptr && !stage2.active();
  if (may_skip) say_where_skips_are_decided(on_device, stage2.active());
  if (on_device) {
    step_skipping_on_device(loss, found_inf, lr, update, epoch, precision, stage2, loss_of);
  } else {
    std::string skip_reason = precision.skip_reason(found_inf);
    // "skip" must know before stepping: one read of the loss (free on CPU).
    if (skip_reason.empty() && skips_for_loss(loss)) skip_reason = "loss is not finite";
    if (skip_reason.empty())
      step_optimizer(loss, lr, update, stage2, loss_of, std::nullopt);
    else
      record_skip(update, epoch, skip_reason);
  }
  precision.end_update();
  c_.optimizer->zero_grad();
}

// No read of the device: the optimizer is handed the flag, and the values
// that say why are kept for settle().
void UpdateStep::step_skipping_on_device(const at::Tensor& loss, const at::Tensor& found_inf, double lr,
                                         std::int64_t update, std::int64_t epoch, const PrecisionPolicy& precision,
                                         DimReduceStage& stage2, const DimReduceStage::BatchLoss& loss_of) {
  std::vector<at::Tensor> values;
  at::Tensor flag;
  if (found_inf.defined()) {
    flag = found_inf;
    values = {found_inf, precision.scale_tensor().to(found_inf.device())};
  }
  if (on_nonfinite_ == NonFinitePolicy::skip) {
    const auto loss_not_finite = at::isfinite(loss.detach()).logical_not().to(at::kFloat).reshape({});
    flag = flag.defined() ? at::maximum(flag, loss_not_finite.to(flag.device())) : loss_not_finite;
    values.push_back(loss_not_finite.to(values.empty() ? loss_not_finite.device() : values.front().device()));
  }
  step_optimizer(loss, lr, update, stage2, loss_of, flag);
  unread_.push_back({update, epoch, at::stack(values)});
}

void UpdateStep::step_optimizer(const at::Tensor& loss, double lr, std::int64_t update, DimReduceStage& stage2,
                                const DimReduceStage::BatchLoss& loss_of,
                                const std::optional<at::Tensor>& device_skip) {
  auto& groups = c_.optimizer->param_groups();
  for (std::size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lr * c_.groups[i].lr_scale);
  if (stage2.active()) {
    stage2.step(loss, loss_of, metrics_);
    return;
  }
  UpdateView view{*c_.optimizer, metrics_, update, device_skip.value_or(at::Tensor())};
  for (std::size_t i = 0; i < c_.wrappers.size(); ++i) {
    const PluginCallScope in_wrapper(wrapper_site(i), "before_step");
    c_.wrappers[i]->before_step(view);
  }
  {
    const PluginCallScope in_optimizer(c_.sites.optimizer, "step");
    // Armed just before step(), so a wrapper that throws leaves no flag behind.
    if (device_skip) skipper_->skip_next_step_if(*device_skip);
    c_.optimizer->step();
  }
  for (std::size_t i = c_.wrappers.size(); i-- > 0;) {
    const PluginCallScope in_wrapper(wrapper_site(i), "after_step");
    c_.wrappers[i]->after_step(view);
  }
}

void UpdateStep::settle() const {
  if (unread_.empty()) return;
  std::vector<at::Tensor> rows;
  rows.reserve(unread_.size());
  for (const auto& check : unread_) rows.push_back(check.values);
  const auto values = at::stack(rows).to(at::kCPU, at::kDouble).contiguous();
  const auto read = values.accessor<double, 2>();
  const bool scaled = values.size(1) >= 2;  // [found_inf, scale] lead when loss scaling is on
  for (std::size_t i = 0; i < unread_.size(); ++i) {
    const auto row = static_cast<std::int64_t>(i);
    std::string reason;
    if (scaled && read[row][0] != 0)
      reason = PrecisionPolicy::inf_reason(read[row][1]);
    else if (on_nonfinite_ == NonFinitePolicy::skip && read[row][values.size(1) - 1] != 0)
      reason = "loss is not finite";
    if (!reason.empty()) record_skip(unread_[i].update, unread_[i].epoch, reason);
  }
  unread_.clear();
}

void UpdateStep::record_skip(std::int64_t update, std::int64_t epoch, const std::string& reason) const {
  ++skipped_;
  recorder_.event("skipped_update", "update " + std::to_string(update + 1) + " (epoch " + std::to_string(epoch + 1) +
                                        ") skipped: " + reason);
}

void UpdateStep::say_where_skips_are_decided(bool on_device, bool in_stage2) {
  if (said_where_skips_are_decided_) return;
  said_where_skips_are_decided_ = true;
  if (on_device) {
    recorder_.event("skip_check",
                    "updates with inf/nan gradients or a non-finite loss are skipped on the device, so no update "
                    "waits for the host; skipped updates are recorded at the next log point");
    return;
  }
  const std::string why = in_stage2                          ? "stage 2 of dimension-reduce training steps its own way"
                          : !c_.device_skip_blocker.empty() ? c_.device_skip_blocker
                                                            : "the optimizer cannot skip an update on the device";
  recorder_.event("skip_check", "each update waits for the host to read its inf/nan check: " + why +
                                    " (an optimizer needs SkipsOnDevice, its wrappers only_rewrites_gradients or "
                                    "honours_skip_flag)");
}

StateDict UpdateStep::state_dict() const {
  settle();
  return {{"skipped_updates", at::scalar_tensor(skipped_, at::kLong)}};
}

void UpdateStep::load_state_dict(const StateDict& state) {
  unread_.clear();
  if (const auto it = state.find("skipped_updates"); it != state.end()) skipped_ = it->second.item<std::int64_t>();
}

}  // namespace orchestrate

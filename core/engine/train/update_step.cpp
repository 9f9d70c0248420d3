#include "train/update_step.h"
#include "run_store.h"

#include <cmath>

namespace orchestrate {

UpdateStep::UpdateStep(TrainingComponents& components, NonFinitePolicy on_nonfinite, RunStore& store,
                       std::int64_t run_id)
    : c_(components), on_nonfinite_(on_nonfinite), store_(store), run_id_(run_id) {
  for (const auto& group : c_.groups)
    for (const auto& parameter : group.parameters) parameters_.push_back(parameter.tensor);
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
      for (auto& wrapper : c_.wrappers) wrapper->before_step(view);
      c_.optimizer->step();
      for (auto it = c_.wrappers.rbegin(); it != c_.wrappers.rend(); ++it) (*it)->after_step(view);
    }
  } else {
    ++skipped_;
    store_.record_event(run_id_, "skipped_update",
                        "update " + std::to_string(update + 1) + " (epoch " + std::to_string(epoch + 1) +
                            ") skipped: " + skip_reason);
  }
  precision.end_update();
  c_.optimizer->zero_grad();
}

}  // namespace orchestrate

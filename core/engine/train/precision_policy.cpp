#include "engine/train/precision_policy.h"
#include "store/run_store.h"

namespace orchestrate {

PrecisionPolicy::PrecisionPolicy(PrecisionMode mode, const LossScalerSettings& scaler, c10::DeviceType device)
    : mode_(mode), device_(device), scaler_(scaler) {}

ModelOutput PrecisionPolicy::forward(Model& model, const at::Tensor& images) const {
  AutocastScope autocast(device_, mode_);
  return model.forward_train(images);
}

at::Tensor PrecisionPolicy::unscale(const std::vector<at::Tensor>& parameters) {
  found_inf_ = at::Tensor();
  if (!scaler_.enabled()) return found_inf_;
  std::vector<at::Tensor> grads;
  grads.reserve(parameters.size());
  for (const auto& p : parameters) grads.push_back(p.grad());
  found_inf_ = scaler_.unscale_(grads);
  return found_inf_;
}

std::string PrecisionPolicy::skip_reason(const at::Tensor& found_inf) const {
  if (!found_inf.defined() || !LossScaler::found_inf_value(found_inf)) return "";
  return inf_reason(scaler_.scale_value());
}

std::string PrecisionPolicy::inf_reason(double loss_scale) {
  return "inf/nan gradients at loss scale " + std::to_string(loss_scale);
}

void PrecisionPolicy::end_update() {
  if (scaler_.enabled()) scaler_.update(found_inf_);
}

void PrecisionPolicy::add_metrics(RunStore::MetricValues& metrics, std::int64_t skipped_updates) const {
  if (!scaler_.enabled()) return;
  metrics.emplace_back("train/loss_scale", scaler_.scale_value());
  metrics.emplace_back("train/skipped_updates", static_cast<double>(skipped_updates));
}

}  // namespace orchestrate

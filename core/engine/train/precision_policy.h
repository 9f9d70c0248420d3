// Precision, one concern of the step: the autocast dtype of forward passes
// and fp16's loss scaler, which scales the loss, unscales the gradients and
// says when an update must be skipped.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceType.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/precision/autocast_scope.h"
#include "engine/precision/loss_scaler.h"
#include "orchestrate/model.h"
#include "store/run_records.h"

namespace orchestrate {

class PrecisionPolicy {
 public:
  PrecisionPolicy(PrecisionMode mode, const LossScalerSettings& scaler, c10::DeviceType device);

  // The model's training forward under the recipe's autocast.
  ModelOutput forward(Model& model, const at::Tensor& images) const;
  // What backward() runs on: the loss times the scale (the loss itself when off).
  at::Tensor scale(const at::Tensor& loss) { return scaler_.scale(loss); }
  // Divides the gradients by the scale and returns found_inf, on the device
  // and not read: nonzero when a gradient is inf or nan. Undefined when
  // scaling is off.
  at::Tensor unscale(const std::vector<at::Tensor>& parameters);
  // Why the update must be skipped ("inf/nan gradients at loss scale ..."),
  // or "": one read of the device, for optimizers that cannot skip there.
  std::string skip_reason(const at::Tensor& found_inf) const;
  static std::string inf_reason(double loss_scale);
  // The scale this update's gradients were unscaled by, on the device.
  const at::Tensor& scale_tensor() const { return scaler_.scale_tensor(); }
  // Closes the update: dynamic scaling grows or backs off. No sync.
  void end_update();
  // train/loss_scale and train/skipped_updates, when scaling is on.
  void add_metrics(MetricValues& metrics, std::int64_t skipped_updates) const;

  PrecisionMode mode() const { return mode_; }
  LossScaler& scaler() { return scaler_; }  // its state is the checkpoint's

 private:
  const PrecisionMode mode_;
  const c10::DeviceType device_;
  LossScaler scaler_;
  at::Tensor found_inf_;  // of the update being applied
};

}  // namespace orchestrate

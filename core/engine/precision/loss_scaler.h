// Loss scaling for fp16 training: torch.amp.GradScaler's semantics, which the
// C++ API lacks, built on the same ATen kernels so the scales match exactly.
//
// One step, in the trainer's words:
//   scaler.scale(loss).backward();
//   const at::Tensor found_inf = scaler.unscale_(grads);   // no sync
//   if (!LossScaler::found_inf_value(found_inf)) optimizer.step();  // one sync
//   scaler.update(found_inf);                                // no sync
//
// The scale, growth tracker and skipped-update count live on the loss's device
// as 0-dim tensors, so scaling, unscaling and updating never wait for the
// device; only found_inf_value(), scale_value() and skipped_updates() read them.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/precision/loss_scaler_settings.h"
#include "orchestrate/stateful.h"

namespace orchestrate {

class LossScaler : public Stateful {
 public:
  // Checks the settings (positive scales, growth > 1, 0 < backoff < 1,
  // interval >= 1); a bad one is an Error naming it.
  explicit LossScaler(const LossScalerSettings& settings);

  bool enabled() const { return settings_.mode != LossScaleMode::off; }
  const LossScalerSettings& settings() const { return settings_; }

  // loss * scale; the scaler's state moves to the loss's device on first use.
  // Off: the loss itself.
  at::Tensor scale(const at::Tensor& loss);

  // Divides the gradients in place by the scale and returns found_inf: a 0-dim
  // float tensor on the scaler's device (the loss's), 1 when any
  // gradient has an inf or nan, else 0 (ATen's fused optimizers skip at
  // exactly 1); gradients on other devices are checked there. Undefined
  // gradients are skipped; float16 gradients are refused
  // (as GradScaler does: keep parameters in fp32, autocast computes in fp16).
  // Off: gradients untouched, found_inf is a CPU zero.
  at::Tensor unscale_(const std::vector<at::Tensor>& grads);

  // Ends the step: counts it as skipped when found_inf is set and, in dynamic
  // mode, grows or backs off the scale. No sync.
  void update(const at::Tensor& found_inf);

  // Whether this step's gradients were not finite, so the optimizer step must
  // be skipped (in fixed mode too, as MoXing does). Reads the device: a sync.
  static bool found_inf_value(const at::Tensor& found_inf);

  // The scale, 0-dim float32 on the loss's device; not read.
  const at::Tensor& scale_tensor() const { return scale_; }
  // Reads the device (a sync): for logging and tests, not for every step.
  double scale_value() const;
  std::int64_t skipped_updates() const;

  // Scale, growth tracker and skipped count, so a resumed run is exact. In
  // fixed mode the scale stays the recipe's: a changed recipe wins.
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

 private:
  void move_state_to(const c10::Device& device);

  LossScalerSettings settings_;
  at::Tensor scale_;           // float32, 0-dim
  at::Tensor growth_tracker_;  // int32, 0-dim: clean steps since the last change
  at::Tensor skipped_;         // int64, 0-dim: updates whose found_inf was set
};

}  // namespace orchestrate

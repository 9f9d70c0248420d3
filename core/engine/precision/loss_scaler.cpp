#include "engine/precision/loss_scaler.h"

#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_amp_update_scale.h>
#include <ATen/ops/full.h>
#include <ATen/ops/maximum.h>
#include <c10/core/GradMode.h>

#include "orchestrate/error.h"

namespace orchestrate {

namespace {

at::Tensor scalar_tensor(double value, at::ScalarType dtype, const c10::Device& device = c10::kCPU) {
  return at::full({}, value, at::TensorOptions().dtype(dtype).device(device));
}

void require(bool ok, const std::string& what) {
  if (!ok) throw Error("loss scaler: " + what + "; fix [precision] in the recipe");
}

// One call of the ATen kernel: it takes gradients of one device and dtype.
struct GradGroup {
  c10::Device device;
  at::ScalarType dtype;
  std::vector<at::Tensor> values;
};

// Adds `values` to its device and dtype's group; a handful of groups at most.
void add_to_group(std::vector<GradGroup>& groups, const at::Tensor& values) {
  for (auto& group : groups)
    if (group.device == values.device() && group.dtype == values.scalar_type()) {
      group.values.push_back(values);
      return;
    }
  groups.push_back({values.device(), values.scalar_type(), {values}});
}

}  // namespace

LossScaleMode parse_loss_scale_mode(const std::string& name) {
  if (name == "off") return LossScaleMode::off;
  if (name == "static") return LossScaleMode::fixed;
  if (name == "dynamic") return LossScaleMode::dynamic;
  throw Error("loss scaler: unknown mode '" + name + "'; use one of off, static, dynamic");
}

const char* loss_scale_mode_name(LossScaleMode mode) {
  switch (mode) {
    case LossScaleMode::off: return "off";
    case LossScaleMode::fixed: return "static";
    case LossScaleMode::dynamic: return "dynamic";
  }
  return "?";
}

LossScaler::LossScaler(const LossScalerSettings& settings) : settings_(settings) {
  if (settings_.mode == LossScaleMode::fixed)
    require(settings_.scale > 0, "static loss_scale must be > 0, got " + std::to_string(settings_.scale));
  if (settings_.mode == LossScaleMode::dynamic) {
    require(settings_.scale > 0, "init_scale must be > 0, got " + std::to_string(settings_.scale));
    require(settings_.growth_factor > 1.0,
            "growth_factor must be > 1, got " + std::to_string(settings_.growth_factor));
    require(settings_.backoff_factor > 0.0 && settings_.backoff_factor < 1.0,
            "backoff_factor must be in (0, 1), got " + std::to_string(settings_.backoff_factor));
    require(settings_.growth_interval >= 1,
            "growth_interval must be >= 1, got " + std::to_string(settings_.growth_interval));
  }
  scale_ = scalar_tensor(enabled() ? settings_.scale : 1.0, at::kFloat);
  growth_tracker_ = scalar_tensor(0, at::kInt);
  skipped_ = scalar_tensor(0, at::kLong);
}

void LossScaler::move_state_to(const c10::Device& device) {
  if (scale_.device() == device) return;
  scale_ = scale_.to(device);
  growth_tracker_ = growth_tracker_.to(device);
  skipped_ = skipped_.to(device);
}

at::Tensor LossScaler::scale(const at::Tensor& loss) {
  if (!enabled()) return loss;
  move_state_to(loss.device());
  return loss * scale_;
}

at::Tensor LossScaler::unscale_(const std::vector<at::Tensor>& grads) {
  if (!enabled()) return scalar_tensor(0, at::kFloat);
  at::NoGradGuard no_grad;

  // Gradients of fp32 and other params may be mixed; GradScaler splits them
  // the same way. A sparse gradient is unscaled through its values (only an
  // fp16 one would need coalescing first, and those are refused).
  std::vector<GradGroup> groups;
  for (std::size_t i = 0; i < grads.size(); ++i) {
    const at::Tensor& grad = grads[i];
    if (!grad.defined()) continue;
    require(grad.scalar_type() != at::kHalf,
            "gradient " + std::to_string(i) +
                " is float16; keep parameters in float32 (autocast computes in fp16) or turn loss scaling off");
    add_to_group(groups, grad.is_sparse() ? grad._values() : grad);
  }

  // 1/scale in double, then float, as GradScaler does: float division can be
  // inexact under some compile options. Stays on the device: no sync.
  const at::Tensor inv_scale = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
  at::Tensor found_inf = scalar_tensor(0, at::kFloat, scale_.device());
  for (auto& group : groups) {
    if (group.device == scale_.device()) {
      at::_amp_foreach_non_finite_check_and_unscale_(group.values, found_inf, inv_scale);
      continue;
    }
    // Another device checks into its own flag, added back without a sync
    // where the copy lands on a GPU (its stream orders it); a copy to the
    // host is waited for, since a CPU kernel would read it at once.
    at::Tensor found_there = scalar_tensor(0, at::kFloat, group.device);
    at::_amp_foreach_non_finite_check_and_unscale_(group.values, found_there,
                                                   inv_scale.to(group.device, /*non_blocking=*/group.device.is_cuda()));
    const bool to_gpu = scale_.device().is_cuda();
    found_inf = at::maximum(found_inf, found_there.to(scale_.device(), /*non_blocking=*/to_gpu));  // still 0 or 1
  }
  return found_inf;
}

void LossScaler::update(const at::Tensor& found_inf) {
  if (!enabled()) return;
  const at::Tensor found = found_inf.to(scale_.device(), /*non_blocking=*/scale_.device().is_cuda());
  skipped_.add_(found.gt(0));
  if (settings_.mode == LossScaleMode::dynamic)
    at::_amp_update_scale_(scale_, growth_tracker_, found.to(at::kFloat), settings_.growth_factor,
                           settings_.backoff_factor, settings_.growth_interval);
}

bool LossScaler::found_inf_value(const at::Tensor& found_inf) { return found_inf.item<double>() != 0.0; }

double LossScaler::scale_value() const { return scale_.item<double>(); }

std::int64_t LossScaler::skipped_updates() const { return skipped_.item<std::int64_t>(); }

StateDict LossScaler::state_dict() const {
  return {{"scale", scale_.cpu()}, {"growth_tracker", growth_tracker_.cpu()}, {"skipped_updates", skipped_.cpu()}};
}

void LossScaler::load_state_dict(const StateDict& state) {
  const auto read = [&](const char* key, at::ScalarType dtype) {
    const auto it = state.find(key);
    if (it == state.end())
      throw Error(std::string("loss scaler: checkpoint has no '") + key +
                  "'; it was saved without loss scaling, so resume with [precision] as it was or start afresh");
    return it->second.to(scale_.device(), dtype).reshape({});
  };
  at::Tensor scale = read("scale", at::kFloat);
  growth_tracker_ = read("growth_tracker", at::kInt);
  skipped_ = read("skipped_updates", at::kLong);
  if (settings_.mode == LossScaleMode::dynamic) scale_ = scale;
}

}  // namespace orchestrate

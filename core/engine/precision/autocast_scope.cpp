#include "engine/precision/autocast_scope.h"

#include <ATen/autocast_mode.h>
#include <c10/core/DeviceType.h>
#include <torch/cuda.h>

#include "orchestrate/error.h"

namespace orchestrate {

PrecisionMode parse_precision_mode(const std::string& name) {
  if (name == "fp32") return PrecisionMode::fp32;
  if (name == "bf16") return PrecisionMode::bf16;
  if (name == "fp16") return PrecisionMode::fp16;
  throw Error("precision: unknown mode '" + name + "'; use one of fp32, bf16, fp16");
}

const char* precision_mode_name(PrecisionMode mode) {
  switch (mode) {
    case PrecisionMode::fp32: return "fp32";
    case PrecisionMode::bf16: return "bf16";
    case PrecisionMode::fp16: return "fp16";
  }
  return "?";
}

c10::ScalarType autocast_dtype(PrecisionMode mode) {
  switch (mode) {
    case PrecisionMode::fp32: return c10::kFloat;
    case PrecisionMode::bf16: return c10::kBFloat16;
    case PrecisionMode::fp16: return c10::kHalf;
  }
  return c10::kFloat;
}

// torch.autocast accepts bf16 and fp16 on every device it knows, CPU included
// (2.11 runs linear and conv2d in fp16 on CPU; autocast_scope_test checks it).
// CUDA bf16 needs no capability check: torch.cuda.is_bf16_supported() is true
// on every CUDA device since emulation counts, so only CUDA's absence fails.
std::optional<std::string> AutocastScope::unsupported_reason(c10::DeviceType device_type, PrecisionMode mode) {
  if (mode == PrecisionMode::fp32) return std::nullopt;
  const std::string what = std::string(precision_mode_name(mode)) + " autocast on " + c10::DeviceTypeName(device_type, true);
  if (!at::autocast::is_autocast_available(device_type))
    return what + " is not supported: autocast has no kernels for that device; set [precision] mode = \"fp32\"";
  if (device_type == c10::DeviceType::CUDA && !torch::cuda::is_available())
    return what + " needs a CUDA device and none is visible; train on cpu or set [precision] mode = \"fp32\"";
  return std::nullopt;
}

// Mirrors torch.autocast.__enter__: remember the device's flag and dtype,
// set ours, and count the nesting so only the outermost exit drops the cast
// cache (casted weights are reused across nested scopes, not across steps).
//
// One deliberate difference: the cache is keyed by weight, not by dtype, so
// torch.autocast nested with another dtype reuses the outer scope's casts and
// fails ("mat1 and mat2 must have the same dtype"). Switching dtype here
// clears the cache on the way in and out; re-casting is the only cost.
AutocastScope::AutocastScope(c10::DeviceType device_type, PrecisionMode mode) : device_type_(device_type) {
  if (mode == PrecisionMode::fp32) return;
  if (auto reason = unsupported_reason(device_type, mode)) throw Error(*reason);
  previous_enabled_ = at::autocast::is_autocast_enabled(device_type);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_type);
  switches_dtype_ = previous_enabled_ && previous_dtype_ != autocast_dtype(mode);
  if (switches_dtype_) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_type, true);
  at::autocast::set_autocast_dtype(device_type, autocast_dtype(mode));
  at::autocast::increment_nesting();
  active_ = true;
}

// Mirrors torch.autocast.__exit__.
AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0 || switches_dtype_) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_type_, previous_enabled_);
  at::autocast::set_autocast_dtype(device_type_, previous_dtype_);
}

}  // namespace orchestrate

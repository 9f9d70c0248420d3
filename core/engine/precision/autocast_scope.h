// Autocast for the forward pass: an RAII guard doing what torch.autocast's
// __enter__/__exit__ do, since the C++ API only has the raw at::autocast calls.
//
//   {
//     AutocastScope autocast(device.type(), PrecisionMode::bf16);
//     logits = model->forward(images);   // matmuls and convs in bfloat16
//   }
//   loss = cross_entropy(logits.to(at::kFloat), labels);  // outside: fp32
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

#include "engine/precision/precision_mode.h"

namespace orchestrate {

// The dtype autocast computes in: kFloat for fp32.
c10::ScalarType autocast_dtype(PrecisionMode mode);

class AutocastScope {
 public:
  // Turns autocast on for `device_type` in `mode`'s dtype until destruction;
  // an unsupported combination is an Error with unsupported_reason()'s text.
  AutocastScope(c10::DeviceType device_type, PrecisionMode mode);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

  // Why autocast cannot run `mode` on `device_type`, as one line; nullopt
  // when it can. fp32 is always supported (it does nothing).
  static std::optional<std::string> unsupported_reason(c10::DeviceType device_type, PrecisionMode mode);

 private:
  c10::DeviceType device_type_;
  bool active_ = false;  // false for fp32: nothing to restore
  bool previous_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Undefined;
  bool switches_dtype_ = false;  // nested in a scope of another dtype: its casts are stale here
};

}  // namespace orchestrate

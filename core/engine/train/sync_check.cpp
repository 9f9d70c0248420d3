#include "engine/train/sync_check.h"

#include <c10/cuda/CUDAFunctions.h>

#include <exception>

#include "engine/recipe/settings.h"
#include "orchestrate/error.h"

namespace orchestrate {

SyncDebug parse_sync_debug(const std::string& text) {
  if (text == "warn") return SyncDebug::warn;
  if (text == "error") return SyncDebug::error;
  throw UsageError("--sync-debug " + text + ": unknown; use warn or error");
}

SyncCheck::SyncCheck(SyncDebug mode, const c10::Device& device) : mode_(mode) {
  if (mode_ != SyncDebug::off && !device.is_cuda()) {
    not_checked_ = "--sync-debug checks CUDA runs only; this one trains on the " + device.str();
    mode_ = SyncDebug::off;
  }
}

SyncCheck::Scope::Scope(SyncCheck& check, std::int64_t update)
    : check_(check), update_(update), exceptions_(std::uncaught_exceptions()) {
  // Capture synchronises the device once (cuda_graph_step.cpp); the updates
  // before it tune cuDNN and fill the allocator.
  if (check.mode_ == SyncDebug::off || ++check.updates_begun_ <= kEagerUpdatesBeforeCapture + 1) return;
  auto& state = c10::cuda::warning_state();
  previous_ = static_cast<int>(state.get_sync_debug_mode());
  state.set_sync_debug_mode(check.mode_ == SyncDebug::warn ? c10::cuda::SyncDebugMode::L_WARN
                                                           : c10::cuda::SyncDebugMode::L_ERROR);
  active_ = true;
}

SyncCheck::Scope::~Scope() {
  if (!active_) return;
  c10::cuda::warning_state().set_sync_debug_mode(static_cast<c10::cuda::SyncDebugMode>(previous_));
  if (std::uncaught_exceptions() > exceptions_) check_.failed_update_ = update_;
}

std::string SyncCheck::named(const std::string& reason) const {
  // ATen's text (c10/cuda/CUDAFunctions.cpp, warn_or_error_on_sync).
  if (failed_update_ == 0 || reason.find("called a synchronizing CUDA operation") == std::string::npos) return "";
  return "--sync-debug error: update " + std::to_string(failed_update_) + " waited for the device: " + reason;
}

}  // namespace orchestrate

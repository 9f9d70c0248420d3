#include "engine/train/sync_check.h"

#include <c10/cuda/CUDAFunctions.h>

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

SyncCheck::Scope::Scope(const SyncCheck& check, std::int64_t update) {
  // Capture synchronises the device once (cuda_graph_step.cpp); the updates
  // before it tune cuDNN and fill the allocator.
  if (check.mode_ == SyncDebug::off || update <= kEagerUpdatesBeforeCapture + 1) return;
  auto& state = c10::cuda::warning_state();
  previous_ = static_cast<int>(state.get_sync_debug_mode());
  state.set_sync_debug_mode(check.mode_ == SyncDebug::warn ? c10::cuda::SyncDebugMode::L_WARN
                                                           : c10::cuda::SyncDebugMode::L_ERROR);
  active_ = true;
}

SyncCheck::Scope::~Scope() {
  if (active_) c10::cuda::warning_state().set_sync_debug_mode(static_cast<c10::cuda::SyncDebugMode>(previous_));
}

}  // namespace orchestrate

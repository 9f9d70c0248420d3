// `run --sync-debug warn|error`: ATen's own check of host-device
// synchronisation (torch.cuda.set_sync_debug_mode), turned on around each
// steady training step only: its micro-batches and its update, from the
// update after CUDA graph capture could happen (this process's
// kEagerUpdatesBeforeCapture + 2nd) on. Counted in this process, not by the
// run's update number: after --resume the first updates are again the ones
// that tune cuDNN, capture and move restored state to the device. A step
// that reads the device (an .item(), a copy to the host, a stream
// synchronisation) then warns once per call or fails the run with ATen's
// line and the update (named()). Log points, checkpoints and evaluation
// read the device on purpose and are outside.
//
// What it proves on a GPU: that the loop never waits for the device within
// a step, fp16 loss scaling included (update_step.h). A data-parallel
// run's per-update agreement between ranks reads the device, so it fails
// there by design. Only a CUDA run is checked; elsewhere it says so once.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace orchestrate {

enum class SyncDebug { off, warn, error };

// "warn" or "error", else a UsageError naming the choices.
SyncDebug parse_sync_debug(const std::string& text);

class SyncCheck {
 public:
  SyncCheck(SyncDebug mode, const c10::Device& device);

  // Why nothing is checked in this run ("" when it is, or when off).
  const std::string& not_checked() const { return not_checked_; }

  // One for each update, in order: checks while it lives when this is a
  // steady update of the process; restores the mode it found, and notes
  // `update` (the run's, 1-based) when an exception leaves it.
  class Scope {
   public:
    Scope(SyncCheck& check, std::int64_t update);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    SyncCheck& check_;
    std::int64_t update_;
    bool active_ = false;
    int previous_ = 0;
    int exceptions_ = 0;  // in flight when it began
  };

  // ATen's failure of a checked step, as the run reports it: "--sync-debug
  // error: update 5 waited for the device: <ATen's line>"; "" for any
  // other error.
  std::string named(const std::string& reason) const;

 private:
  SyncDebug mode_;
  std::string not_checked_;
  std::int64_t failed_update_ = 0;  // the checked update an exception left; 0: none
  std::int64_t updates_begun_ = 0;  // by this process (its scopes)
};

}  // namespace orchestrate

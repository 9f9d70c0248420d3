#include "run_failure.h"
#include "run_store.h"

#include <iostream>

#include "orchestrate/error.h"

namespace orchestrate {

void fail_run(RunStore& store, std::int64_t run_id, const std::exception& error, const std::string& doing) {
  try {
    // The store keeps what the user is shown: no LibTorch backtrace.
    const std::string reason = dynamic_cast<const Error*>(&error) ? error_for_display(error.what()) : exception_reason(error);
    store.record_event(run_id, "error", reason);
    store.finish_run(run_id, RunStatus::failed, reason);
  } catch (const std::exception& store_error) {
    std::cerr << "orchestrate: could not record the failure in " << store.path() << ": " << store_error.what()
              << "\n";
  }
  if (dynamic_cast<const Error*>(&error)) throw;
  throw Error(doing + " failed: " + exception_reason(error));
}

}  // namespace orchestrate

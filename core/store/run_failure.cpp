#include "store/run_failure.h"
#include "store/run_store.h"

#include <filesystem>
#include <iostream>

#include "crash_report/crash_breadcrumb.h"
#include "orchestrate/error.h"

namespace orchestrate {

void fail_run(RunStore& store, std::int64_t run_id, const std::exception& error, const std::string& doing,
              const std::optional<std::string>& root_cause) {
  try {
    // The store keeps what the user is shown: no LibTorch backtrace.
    const std::string reason = dynamic_cast<const Error*>(&error) ? error_for_display(error.what()) : exception_reason(error);
    store.record_event(run_id, "error", reason);
    if (root_cause) store.record_event(run_id, "crash", *root_cause);
    store.finish_run(run_id, RunStatus::failed, root_cause ? *root_cause : reason);
  } catch (const std::exception& store_error) {
    std::cerr << "orchestrate: could not record the failure in " << store.path() << ": " << store_error.what()
              << "\n";
  }
  if (root_cause) throw Error(*root_cause);
  if (dynamic_cast<const Error*>(&error)) throw;
  throw Error(doing + " failed: " + exception_reason(error));
}

std::optional<std::string> take_peer_crash(const std::string& store_path, std::int64_t run_id, int world_size) {
  for (int rank = 1; rank < world_size; ++rank)
    if (auto crash = read_crash_breadcrumb(store_path, run_id, rank)) {
      std::error_code ignored;
      std::filesystem::remove(crash_breadcrumb_path(store_path, run_id, rank), ignored);
      return crash->message;
    }
  return std::nullopt;
}

}  // namespace orchestrate

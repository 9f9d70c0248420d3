#include "run_failure.h"

#include <iostream>

#include "orchestrate/error.h"

namespace orchestrate {

void fail_run(RunStore& store, std::int64_t run_id, const std::exception& error, const std::string& doing) {
  try {
    store.record_event(run_id, "error", error.what());
    store.finish_run(run_id, RunStatus::failed, error.what());
  } catch (const std::exception& store_error) {
    std::cerr << "orchestrate: could not record the failure in " << store.path() << ": " << store_error.what()
              << "\n";
  }
  if (dynamic_cast<const Error*>(&error)) throw;
  const std::string what = error.what();
  throw Error(doing + " failed: " + what.substr(0, what.find('\n')));
}

}  // namespace orchestrate

// How a recorded run that throws ends: as a failed run that says why.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "run_records.h"

namespace orchestrate {

class RunStore;

// Call from the handler that caught `error` while run `run_id` was running:
// records the error as an event and the run as failed (a store that cannot
// record it is reported on stderr), then rethrows. An exception that is not
// an orchestrate Error comes back as one saying "<doing> failed: <its first
// line>", since LibTorch's carry a C++ backtrace after the first line.
[[noreturn]] void fail_run(RunStore& store, std::int64_t run_id, const std::exception& error,
                           const std::string& doing);

}  // namespace orchestrate

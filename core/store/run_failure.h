// How a recorded run that throws ends: as a failed run that says why.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include "store/run_records.h"

namespace orchestrate {

class RunStore;

// Call from the handler that caught `error` while run `run_id` was running:
// records the error as an event and the run as failed (a store that cannot
// record it is reported on stderr), then rethrows. An exception that is not
// an orchestrate Error comes back as one saying "<doing> failed: <its first
// line>", since LibTorch's carry a C++ backtrace after the first line.
// `root_cause`: another rank's crash that brought this error about (a
// collective that lost its peer); the run fails of it, and this rank's own
// error is kept as an event.
[[noreturn]] void fail_run(RunStore& store, std::int64_t run_id, const std::exception& error,
                           const std::string& doing, const std::optional<std::string>& root_cause = std::nullopt);

// The crash another rank of the job (1 .. world_size - 1) left beside the
// store for run `run_id` (crash_breadcrumb.h), taken: the file is removed,
// since the caller records it.
std::optional<std::string> take_peer_crash(const std::string& store_path, std::int64_t run_id, int world_size);

}  // namespace orchestrate

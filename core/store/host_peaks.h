// The host's own store of matmul peaks: device_peaks.db in the cache
// directory, shared by every run store on the host, so a host measures each
// peak once (engine/setup/device_peak_cache.h keeps it). `env` lists it and
// the verdict compares a run's precision with the others measured here.
#pragma once

#include <string>
#include <vector>

#include "store/run_records.h"

namespace orchestrate {

// "" when there is no cache directory.
std::string host_peak_cache_path();

// This host's peaks in it, opened read only; none when it does not exist.
// A cache that cannot be read gives none too, and `trouble` (when given)
// says why.
std::vector<DevicePeak> read_host_peaks(std::string* trouble = nullptr);

}  // namespace orchestrate

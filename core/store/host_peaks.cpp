#include "store/host_peaks.h"

#include <filesystem>

#include "orchestrate/cache_dir.h"
#include "orchestrate/error.h"
#include "store/run_liveness.h"
#include "store/run_store.h"

namespace orchestrate {

std::string host_peak_cache_path() {
  const std::string dir = orchestrate_cache_dir();
  return dir.empty() ? "" : dir + "/device_peaks.db";
}

std::vector<DevicePeak> read_host_peaks(std::string* trouble) {
  const std::string path = host_peak_cache_path();
  if (path.empty() || !std::filesystem::exists(path)) return {};
  try {
    return RunStore(path, StoreAccess::read_only).device_peaks(this_host_name());
  } catch (const std::exception& e) {
    if (trouble) *trouble = exception_reason(e);
    return {};
  }
}

}  // namespace orchestrate

#include "engine/setup/device_peak_cache.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "analysis/table_format.h"
#include "engine/recipe/usable_cores.h"
#include "orchestrate/error.h"
#include "store/run_liveness.h"

namespace orchestrate {
namespace {

// Marks a disturbed measurement in its method ("..., best of 32; disturbed:
// 52 % of its threads' time"): the method is what a person reads in the
// utilisation event, and the mark needs no new column in every store.
constexpr const char* kDisturbedMark = "; disturbed: ";

// What the host cache's failure leaves in the run's event: it is only a
// cache, so the peak is measured (or kept) without it.
std::string host_cache_note(const std::exception& e) {
  return "; not kept in the host's peak cache (" + exception_reason(e) + ")";
}

// The host's own run store of peaks. None when there is no cache directory
// or it cannot be opened (damaged, another program's file, a read-only
// home; `note` says why).
std::optional<RunStore> open_host_peaks(std::string& note) {
  const std::string path = host_peak_cache_path();
  if (path.empty()) return std::nullopt;
  try {
    return RunStore(path);
  } catch (const std::exception& e) {
    note = host_cache_note(e);
    return std::nullopt;
  }
}

struct PeakKey {
  std::string host, device, precision;
  int threads;
};

PeakKey key_of(const ComputeSetup& compute, PrecisionMode mode) {
  return {this_host_name(), device_model_name(compute.device), precision_mode_name(mode),
          compute.device.is_cuda() ? 0 : compute.intra_op_threads};
}

DevicePeak peak_from(const PeakKey& key, const MeasuredPeak& measured) {
  std::string method = measured.method;
  if (measured.disturbed())
    method += kDisturbedMark + percent(measured.cpu_share) + " of its threads' time";
  // measured_at "": each store records its own now; the event says "measured now".
  return {key.host, key.device, key.precision, key.threads, measured.flops_per_s, method, ""};
}

void keep_peak(RunStore& store, std::optional<RunStore>& host_peaks, const DevicePeak& peak, std::string& note) {
  store.record_device_peak(peak);
  try {
    if (host_peaks) host_peaks->record_device_peak(peak);
  } catch (const std::exception& e) {
    note = host_cache_note(e);
  }
}

bool machine_looks_idle() {
  double load[1];
  return ::getloadavg(load, 1) == 1 && load[0] < kIdleLoadPerCore * usable_cores();
}

bool plausible(const DevicePeak& peak) {
  return std::isfinite(peak.flops_per_s) && peak.flops_per_s > 0 &&
         peak.flops_per_s <= kMostPlausiblePeakFlopsPerSecond;
}

// True for a kept peak whose measurement shared the cores.
bool measured_while_busy(const DevicePeak& peak) { return peak.method.find(kDisturbedMark) != std::string::npos; }

// True for a kept peak timed by mm alone (matmul_peak.h): a CPU's float16
// one read 3.3 GFLOP/s where linear reaches 42, and gave MFUs over 100 %.
bool timed_by_mm_alone(const DevicePeak& peak) { return peak.method.find(kFasterOfBothProducts) == std::string::npos; }

}  // namespace

FoundPeak find_or_measure_peak(RunStore& store, const ComputeSetup& compute, PrecisionMode mode) {
  const PeakKey key = key_of(compute, mode);
  FoundPeak found;
  std::optional<DevicePeak> stored = store.device_peak(key.host, key.device, key.precision, key.threads);
  std::optional<RunStore> host_peaks;
  bool host_opened = false;  // tried once: a cache that cannot be opened is noted once
  const auto open_host = [&] {
    if (!host_opened) host_peaks = open_host_peaks(found.note);
    host_opened = true;
  };
  if (!stored) {
    open_host();
    try {
      if (host_peaks) stored = host_peaks->device_peak(key.host, key.device, key.precision, key.threads);
    } catch (const std::exception& e) {
      found.note = host_cache_note(e);
      host_peaks.reset();
    }
    if (stored && plausible(*stored)) store.record_device_peak(*stored);
  }
  if (stored && !plausible(*stored)) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%g", stored->flops_per_s);
    found.note += std::string("; the kept peak, ") + rate +
                  " FLOP/s, is not a rate a device has (a damaged cache?): measured again";
    stored.reset();
  }
  if (stored && !timed_by_mm_alone(*stored) && (!measured_while_busy(*stored) || !machine_looks_idle())) {
    found.peak = *stored;
    if (measured_while_busy(*stored)) found.note += "; measured again by a run that finds the machine idle";
    return found;
  }
  const MeasuredPeak measured = measure_matmul_peak(compute.device, mode);
  if (stored && measured.disturbed() && measured.flops_per_s <= stored->flops_per_s) {
    found.peak = *stored;
    found.note += "; measured again, still disturbed, and no higher";
    return found;
  }
  open_host();
  found.peak = peak_from(key, measured);
  keep_peak(store, host_peaks, found.peak, found.note);
  if (stored)
    found.note += (timed_by_mm_alone(*stored) ? "; in place of a measurement by mm alone of "
                                              : "; in place of a disturbed measurement of ") +
                  stored->measured_at;
  return found;
}

Remeasured remeasure_peak(RunStore& store, const ComputeSetup& compute, PrecisionMode mode, double stored_flops) {
  Remeasured result;
  result.measured = measure_matmul_peak(compute.device, mode);
  if (result.measured.flops_per_s <= stored_flops) return result;
  std::optional<RunStore> host_peaks = open_host_peaks(result.note);
  keep_peak(store, host_peaks, peak_from(key_of(compute, mode), result.measured), result.note);
  result.kept = true;
  return result;
}

}  // namespace orchestrate

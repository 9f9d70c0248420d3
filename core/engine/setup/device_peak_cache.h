// Where a run's matmul peak comes from (utilisation_baseline.h uses it): the
// run store's device_peaks row for this host, device, precision and threads,
// else the host's own store of peaks in the cache directory
// (~/.cache/orchestrate/device_peaks.db, which every store on the host
// shares), else measured now (matmul_peak.h) and kept in both.
//
// A peak is a maximum: other work on the machine can only lower a
// measurement. So a measurement that shared the cores (MeasuredPeak::
// disturbed) is kept with a mark in its method, and measured again by a
// later run that finds the machine idle; and a new measurement replaces a
// kept one when it is clean or higher. A kept peak timed by mm alone, as
// before kFasterOfBothProducts, is measured again by the next run.
#pragma once

#include <string>

#include "engine/precision/precision_mode.h"
#include "engine/setup/compute_setup.h"
#include "engine/setup/matmul_peak.h"
#include "store/host_peaks.h"
#include "store/run_store.h"

namespace orchestrate {

// Below this 1-minute load average per usable core the machine is taken to
// be idle enough to measure a marked peak again: a test suite or another run
// keeps it above, an idle desktop or node well below.
inline constexpr double kIdleLoadPerCore = 0.5;

// A kept peak outside (0, this] FLOP/s, or not a number, is not a rate any
// device has (100 PFLOP/s is some 40 times a B200's dense fp16) but a damaged
// or edited cache: it is measured again and replaced, where it used to give
// an MFU of 0 % or none at all.
inline constexpr double kMostPlausiblePeakFlopsPerSecond = 1e17;

struct FoundPeak {
  DevicePeak peak;
  std::string note;  // "; ..." for the run's utilisation event: why a cache was passed over, a mark
};

// The peak the run's MFU is taken against. Never throws for a cache that
// cannot be opened (the note says so); a failed measurement throws.
FoundPeak find_or_measure_peak(RunStore& store, const ComputeSetup& compute, PrecisionMode mode);

// Measures again, and keeps the measurement in both stores when it is above
// `stored_flops` (a run proved the stored peak low: utilisation_baseline.h).
struct Remeasured {
  MeasuredPeak measured;
  bool kept = false;
  std::string note;
};
Remeasured remeasure_peak(RunStore& store, const ComputeSetup& compute, PrecisionMode mode, double stored_flops);

}  // namespace orchestrate

#include "engine/setup/utilisation_baseline.h"

#include <cstdio>
#include <optional>

#include "engine/setup/matmul_peak.h"
#include "orchestrate/cache_dir.h"
#include "orchestrate/error.h"
#include "orchestrate/model_flops.h"
#include "store/run_liveness.h"

namespace orchestrate {
namespace {

// "16.8 MFLOP", "98.3 GFLOP/s", "612 TFLOP/s": readable at any scale.
std::string flops_text(double flops, const char* per) {
  const char* unit = "MFLOP";
  double scale = 1e6;
  if (flops >= 1e12) unit = "TFLOP", scale = 1e12;
  else if (flops >= 1e9) unit = "GFLOP", scale = 1e9;
  char text[64];
  std::snprintf(text, sizeof text, "%.*f %s%s", flops / scale >= 100 ? 0 : 1, flops / scale, unit, per);
  return text;
}

// What the host cache's failure leaves in the run's event: it is only a
// cache, so the peak is measured (or kept) without it.
std::string host_cache_note(const std::exception& e) {
  return "; not kept in the host's peak cache (" + exception_reason(e) + ")";
}

// The host's own run store of peaks, beside the other caches: every store on
// this host takes a peak measured once, whichever store measured it. None
// when there is no cache directory or it cannot be opened (damaged, another
// program's file, a read-only home; `note` says why).
std::optional<RunStore> open_host_peaks(std::string& note) {
  const std::string dir = orchestrate_cache_dir();
  if (dir.empty()) return std::nullopt;
  try {
    return RunStore(dir + "/device_peaks.db");
  } catch (const std::exception& e) {
    note = host_cache_note(e);
    return std::nullopt;
  }
}

// The run store's peak for this host, device, precision and threads; else
// the host cache's (then recorded in the run store too); else measured now
// and kept in both. `note` says why the host cache was passed over.
DevicePeak peak_of(RunStore& store, const c10::Device& device, PrecisionMode mode, int threads, std::string& note) {
  const std::string host = this_host_name(), name = device_model_name(device), precision = precision_mode_name(mode);
  const int peak_threads = device.is_cuda() ? 0 : threads;
  if (auto stored = store.device_peak(host, name, precision, peak_threads)) return *stored;
  std::optional<RunStore> host_peaks = open_host_peaks(note);
  std::optional<DevicePeak> cached;
  try {
    if (host_peaks) cached = host_peaks->device_peak(host, name, precision, peak_threads);
  } catch (const std::exception& e) {
    note = host_cache_note(e);
    host_peaks.reset();
  }
  if (cached) {
    store.record_device_peak(*cached);
    return *cached;
  }
  const MeasuredPeak measured = measure_matmul_peak(device, mode);
  // measured_at "": each store records its own now; the event says "measured now".
  const DevicePeak peak{host, name, precision, peak_threads, measured.flops_per_s, measured.method, ""};
  store.record_device_peak(peak);
  try {
    if (host_peaks) host_peaks->record_device_peak(peak);
  } catch (const std::exception& e) {
    note = host_cache_note(e);
  }
  return peak;
}

}  // namespace

void record_utilisation_baseline(RunStore& store, std::int64_t run_id, Model& model, const ModelInput& input,
                                 const ComputeSetup& compute, PrecisionMode mode) {
  std::string message;
  try {
    const double flops = training_flops_per_image(forward_flops_per_image(model, input, compute.device));
    if (flops > 0) {
      store.record_metric(run_id, 0, 0, kTrainFlopsPerImageMetric, flops);
      message = flops_text(flops, "") + " per training image (3x the profiler's forward count)";
    } else {
      message = "no FLOPs counted: the profiler knows none of the model's operations";
    }
  } catch (const std::exception& e) {
    message = "no FLOPs counted: a forward pass on zeros failed: " + exception_reason(e);
  }
  try {
    std::string note;
    const DevicePeak peak = peak_of(store, compute.device, mode, compute.intra_op_threads, note);
    store.record_metric(run_id, 0, 0, kPeakFlopsMetric, peak.flops_per_s);
    message += "; peak " + flops_text(peak.flops_per_s, "/s") + " of " + peak.device + " (" + peak.method +
               (peak.measured_at.empty() ? ", measured now)" : ", as measured " + peak.measured_at + ")") + note;
    if (compute.device.is_cuda())
      if (const auto sheet = datasheet_peak_flops(peak.device, mode)) {
        store.record_metric(run_id, 0, 0, kDatasheetFlopsMetric, *sheet);
        message += "; datasheet " + flops_text(*sheet, "/s");
      }
  } catch (const std::exception& e) {
    message += "; no peak measured: " + exception_reason(e);
  }
  store.record_event(run_id, "utilisation", message);
}

}  // namespace orchestrate

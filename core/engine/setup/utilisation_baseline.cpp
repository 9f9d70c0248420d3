#include "utilisation_baseline.h"

#include <cstdio>
#include <optional>

#include "matmul_peak.h"
#include "orchestrate/cache_dir.h"
#include "orchestrate/error.h"
#include "orchestrate/model_flops.h"
#include "run_liveness.h"

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

// The host's own run store of peaks, beside the other caches: every store on
// this host takes a peak measured once, whichever store measured it. "" when
// there is no cache directory.
std::string host_peak_store_path() {
  const std::string dir = orchestrate_cache_dir();
  return dir.empty() ? "" : dir + "/device_peaks.db";
}

// The host store's peak, if it has one; a host store that cannot be read
// (damaged, another program's file, a read-only home) is only a cache: the
// peak is measured instead, and the reason goes to the event.
std::optional<DevicePeak> host_peak(const std::string& host, const std::string& name, const std::string& precision,
                                    int threads, std::string& note) {
  const std::string path = host_peak_store_path();
  if (path.empty()) return std::nullopt;
  try {
    return RunStore(path).device_peak(host, name, precision, threads);
  } catch (const std::exception& e) {
    note = "; the host's peak cache is unusable (" + exception_reason(e) + ")";
    return std::nullopt;
  }
}

void keep_host_peak(const DevicePeak& peak, std::string& note) {
  const std::string path = host_peak_store_path();
  if (path.empty()) return;
  try {
    RunStore(path).record_device_peak(peak);
  } catch (const std::exception& e) {
    note = "; not kept in the host's peak cache (" + exception_reason(e) + ")";
  }
}

// The run store's peak for this host, device, precision and threads; else
// the host cache's (then recorded in the run store too); else measured now
// and kept in both. `note` says why a cache was passed over.
DevicePeak peak_of(RunStore& store, const c10::Device& device, PrecisionMode mode, int threads, std::string& note) {
  const std::string host = this_host_name(), name = device_model_name(device), precision = precision_mode_name(mode);
  const int peak_threads = device.is_cuda() ? 0 : threads;
  if (auto stored = store.device_peak(host, name, precision, peak_threads)) return *stored;
  if (auto cached = host_peak(host, name, precision, peak_threads, note)) {
    store.record_device_peak(*cached);
    return *cached;
  }
  const MeasuredPeak measured = measure_matmul_peak(device, mode);
  // measured_at "": each store records its own now; the event says "measured now".
  const DevicePeak peak{host, name, precision, peak_threads, measured.flops_per_s, measured.method, ""};
  store.record_device_peak(peak);
  keep_host_peak(peak, note);
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

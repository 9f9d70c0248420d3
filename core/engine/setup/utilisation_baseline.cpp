#include "utilisation_baseline.h"

#include <cstdio>

#include "matmul_peak.h"
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

DevicePeak peak_of(RunStore& store, const c10::Device& device, PrecisionMode mode, int threads) {
  const std::string host = this_host_name(), name = device_model_name(device), precision = precision_mode_name(mode);
  const int peak_threads = device.is_cuda() ? 0 : threads;
  if (auto stored = store.device_peak(host, name, precision, peak_threads)) return *stored;
  const MeasuredPeak measured = measure_matmul_peak(device, mode);
  DevicePeak peak{host, name, precision, peak_threads, measured.flops_per_s, measured.method, ""};
  store.record_device_peak(peak);
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
    const DevicePeak peak = peak_of(store, compute.device, mode, compute.intra_op_threads);
    store.record_metric(run_id, 0, 0, kPeakFlopsMetric, peak.flops_per_s);
    message += "; peak " + flops_text(peak.flops_per_s, "/s") + " of " + peak.device + " (" + peak.method +
               (peak.measured_at.empty() ? ", measured now)" : ", as measured " + peak.measured_at + ")");
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

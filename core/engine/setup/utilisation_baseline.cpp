#include "engine/setup/utilisation_baseline.h"

#include <algorithm>

#include "analysis/reports.h"
#include "analysis/table_format.h"
#include "engine/setup/device_peak_cache.h"
#include "engine/setup/matmul_peak.h"
#include "orchestrate/error.h"
#include "orchestrate/model_flops.h"

namespace orchestrate {

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
    const FoundPeak found = find_or_measure_peak(store, compute, mode);
    const DevicePeak& peak = found.peak;
    store.record_metric(run_id, 0, 0, kPeakFlopsMetric, peak.flops_per_s);
    message += "; peak " + flops_text(peak.flops_per_s, "/s") + " of " + peak.device + " (" + peak.method +
               (peak.measured_at.empty() ? ", measured now)" : ", as measured " + peak.measured_at + ")") + found.note;
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

void recheck_peak_after_run(RunStore& store, std::int64_t run_id, const ComputeSetup& compute, PrecisionMode mode) {
  try {
    store.flush();
    const auto run = store.find_run(std::to_string(run_id));
    if (!run) return;
    const ThroughputRow row = throughput_of(store, *run);
    const double achieved = row.achieved_flops_per_s() / row.devices();  // a device's, as the peak is
    if (row.peak_flops_per_s <= 0 || achieved <= row.peak_flops_per_s) return;
    std::string message = "the run reached " + flops_text(achieved, "/s") + " a device, above the peak of " +
                          flops_text(row.peak_flops_per_s, "/s") +
                          " it was measured against, so that peak is low (measured while the machine was busy?); "
                          "measured again: ";
    const Remeasured again = remeasure_peak(store, compute, mode, row.peak_flops_per_s);
    message += flops_text(again.measured.flops_per_s, "/s");
    if (again.measured.disturbed()) message += " (other work shared the cores)";
    if (again.kept) {
      store.record_metric(run_id, 0, 0, kPeakFlopsMetric, again.measured.flops_per_s);
      message += ", kept in its place for this run and the next" + again.note;
    } else {
      message += ", no higher: the old one is kept";
    }
    if (std::max(again.measured.flops_per_s, row.peak_flops_per_s) < achieved)
      message += "; the run's arithmetic outran the matrix product, so its MFU is above 100 %";
    store.record_event(run_id, "utilisation", message);
  } catch (const std::exception& e) {
    store.record_event(run_id, "utilisation", "the peak was not checked against the run: " + exception_reason(e));
  }
}

}  // namespace orchestrate

// What a run's throughput is measured against: its model's FLOPs per
// training image and the device's matmul peak, recorded before the first
// step so that `report throughput` can show achieved FLOP/s and model FLOPs
// utilisation (MFU) beside images/s, as torchtitan does for LLMs.
#pragma once

#include <cstdint>

#include "engine/setup/compute_setup.h"
#include "orchestrate/model.h"
#include "store/run_store.h"

namespace orchestrate {

// Records, at step 0 of `run_id`, kTrainFlopsPerImageMetric (LibTorch's
// profiler counts the forward; model_flops.h), kPeakFlopsMetric (the kept
// or measured peak: device_peak_cache.h) and, on a GPU with a datasheet
// figure, kDatasheetFlopsMetric; an event "utilisation" says how each was
// found. Call it before the input pipeline starts, so no other thread
// competes with the measurement. A figure that cannot be had (a model the
// profiler cannot run on zeros) is left out with an event saying why: it
// never fails the run.
void record_utilisation_baseline(RunStore& store, std::int64_t run_id, Model& model, const ModelInput& input,
                                 const ComputeSetup& compute, PrecisionMode mode);

// After the run's end is recorded (so that its second of measuring is not
// in the run's wall time): a run whose achieved FLOP/s a device (the
// report's images/s x FLOPs per image) exceeds its recorded peak proves that
// peak low, measured while other work shared the machine before the peak's
// share of the cores was checked, or in a moment the check did not catch.
// The peak is measured again and, when higher (marked if disturbed: a peak
// is a maximum), replaces the stored ones (the run store's, the host
// cache's) and this run's kPeakFlopsMetric; an event "utilisation" says what
// was found. A run at or below its peak costs one query. Never fails the run.
void recheck_peak_after_run(RunStore& store, std::int64_t run_id, const ComputeSetup& compute, PrecisionMode mode);

}  // namespace orchestrate

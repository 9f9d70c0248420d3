// A sweep's trials ranked by its metric: what `sweep` prints at its end and
// `sweep show ID` prints from the store. Finished trials first, best first;
// then trials the scheduler stopped, furthest rung first, best first within
// a rung; then those with no value yet; failed trials last, with their reason.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/table_format.h"
#include "store/sweep_records.h"
#include "sweep/sweep_spec.h"

namespace orchestrate::sweep {

std::vector<SweepTrialRecord> ranked(std::vector<SweepTrialRecord> trials, Mode mode);

// The first of the ranking with a value: the best finished trial, or while
// none has finished, the best at the furthest rung.
std::optional<std::int64_t> best_trial(const std::vector<SweepTrialRecord>& trials, Mode mode);

// rank, trial, run, state, value (of the metric), rung, step, seconds, each
// parameter's value (in JSON, one "parameters" object), a failed trial's reason.
Table ranking_table(const std::vector<SweepTrialRecord>& trials, Mode mode);

Mode mode_named(const std::string& name);  // "max" or "min", as the store keeps it
const char* mode_name(Mode mode);
const char* scheduler_name(Scheduler scheduler);  // "none", "asha" or "median", as the store keeps it

}  // namespace orchestrate::sweep

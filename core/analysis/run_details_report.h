// `orchestrate show RUN`: everything recorded about one run, as sections.
#pragma once

#include <vector>

#include "analysis/table_format.h"
#include "store/run_store.h"

namespace orchestrate {

// "run" (fields: identity, status, times, command line, recipe file, git
// revision, versions, host, device, world size, tags, error), "metrics"
// (final, min and max of each), "plugins" (name, version, sha256, library),
// "events" (time, kind, message) and "resolved recipe" (its TOML text).
std::vector<Section> run_details_sections(const RunDetails& details, const std::vector<EventRecord>& events);

}  // namespace orchestrate

// The summary `orchestrate run` prints when a run ends, for a terminal: at
// most kSummaryColumns wide, where the full `report throughput` table (25
// columns, 336 characters) wrapped on every terminal. What a user acts on:
// images/s, where the step time went, MFU, the verdict and its fixes, and
// the command that shows the whole report.
#pragma once

#include <cstddef>
#include <string>

#include "analysis/bottleneck_verdict.h"
#include "analysis/reports.h"

namespace orchestrate {

inline constexpr std::size_t kSummaryColumns = 100;

// `report_command`: how to see the full report ("orchestrate report
// throughput 3 --db runs.db"). Lines end in '\n'; none is wider than
// kSummaryColumns unless a single word (a long path) is.
std::string run_summary(const ThroughputRow& row, const Verdict& verdict, const std::string& report_command);

// `text` folded at spaces into lines of at most `width` characters, each
// after the first starting with `indent`; a word longer than a line stays whole.
std::string fold(const std::string& text, std::size_t width, const std::string& indent);

}  // namespace orchestrate

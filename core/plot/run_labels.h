// What a chart's legend calls each run: the resolved-recipe keys that differ
// between the charted runs ("optimizer.lr=0.0005"), as `orchestrate compare`
// finds them, so a legend says why two curves differ, not just whose they are.
#pragma once

#include <string>
#include <vector>

#include "store/run_store.h"

namespace orchestrate::plot {

// One label per run, in order. run.name is left out (it names the run, not
// what changed); at most kMaxLabelKeys keys are
// spelled out, then "+N more". With no differing key, or labels that would
// not tell runs apart, the run's name and id ("slow_lr #3") are used.
inline constexpr std::size_t kMaxLabelKeys = 3;
std::vector<std::string> run_labels(const std::vector<RunDetails>& runs);

}  // namespace orchestrate::plot

// What the run store keeps of a sweep (`orchestrate sweep`): the spec, its
// state and best trial, and one row per trial (migration 8 of
// share/sql/run_store.sql). The trials themselves are runs, tagged
// sweep=<name>, sweep_id=<id> and trial=<n>; a trial row links its run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace orchestrate {

// The tag every trial's run carries: the id of its sweep.
inline constexpr const char* kSweepIdTag = "sweep_id";

struct SweepRecord {
  std::int64_t id = 0;  // set by begin_sweep
  std::string name, spec_path, spec, recipe_path, metric;
  std::string mode = "max";         // max or min
  std::string scheduler = "none";   // none, asha or median
  std::string state = "running";    // running, finished, stopped, failed (and "lost" when read: see below)
  std::optional<std::int64_t> best_trial;
  std::string started_at, ended_at;  // ended_at "" while running
  std::string host;
  std::int64_t pid = 0;
  std::string command_line;
};

// A trial's state: pending (not started), running, finished, stopped (by
// the scheduler at `rung`), interrupted (Ctrl-C or a lost controller; its
// run resumes from its checkpoint) or failed (`reason`).
struct SweepTrialRecord {
  std::int64_t sweep_id = 0, trial = 0;
  std::vector<std::pair<std::string, std::string>> overrides;  // recipe key -> TOML value text, in spec order
  std::string state = "pending";
  std::int64_t run_id = 0;  // 0: no run yet
  std::optional<std::int64_t> rung, step;
  std::optional<double> value;
  std::string reason;
  double seconds = 0;
};

// A sweep read back with its trials, in trial order.
struct SweepDetails {
  SweepRecord sweep;
  std::vector<SweepTrialRecord> trials;
};

}  // namespace orchestrate

// The sweep's controller: has its executor (this machine, or Slurm) start
// each trial left (a pending one afresh, an interrupted one from its
// checkpoint with `run --resume`), watches the
// metric each running trial records, lets the scheduler stop a trial at a
// rung (one SIGINT: it saves and ends), and records every change of a trial
// in the run store's sweep_trials, so that a controller killed at any moment
// leaves a sweep that `sweep --resume` takes up: no finished trial run
// again, no trial run twice.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "store/run_store.h"
#include "store/sweep_records.h"
#include "sweep/executor.h"
#include "sweep/sweep_spec.h"
#include "sweep/trial_scheduler.h"

namespace orchestrate::sweep {

// What the sweep needs beyond its spec.
struct SweepSetup {
  std::int64_t sweep_id = 0;
  std::string recipe_path;                // the base recipe, resolved
  std::string engine;                     // the orchestrate-engine that runs each trial
  std::string db;                         // the sweep's run store, where every trial's run ends up
  std::vector<std::string> run_arguments; // passed to each `run` too (--plugin-path ...)
  std::string output_dir;                 // absolute: each trial's outcome, log and (Slurm) store
};

class SweepController {
 public:
  // `trials`: every trial of the sweep as the store has it. With an
  // executor whose trials keep stores of their own (Slurm), trial N records
  // in <output_dir>/trial-N.db, watched there while it runs and imported
  // into `store` when it ends.
  SweepController(const SweepSpec& spec, std::vector<SweepTrialRecord> trials, const SweepSetup& setup,
                  RunStore& store, Executor& executor);

  // Has the executor interrupt what a killed controller left running, waits
  // (up to a minute) for those trials' runs to save and end, brings each
  // trial's own store into the sweep's (Slurm), then feeds the scheduler
  // every rung the trials met so far, in the order they met them; a trial
  // the scheduler would have stopped is stopped. For `sweep --resume`.
  void take_up();

  // Runs the trials that have not ended, with a progress line on stderr;
  // returns every trial as it is now. Ctrl-C stops them (each saves).
  std::vector<SweepTrialRecord> run();
  bool stopped() const { return stopped_; }

 private:
  struct TrialRun {
    std::int64_t id = 0;  // in `db`
    std::string status;
    std::string db;       // the store the trial records in
  };
  std::string store_of(std::int64_t trial) const;  // where the trial records
  // Each trial's newest run, in the store it records in (a trial of its own
  // store: only those not ended); `only`: that trial's alone, one store read.
  std::map<std::int64_t, TrialRun> runs_by_trial(std::optional<std::int64_t> only = std::nullopt) const;
  // A trial of its own store: its runs copied into the sweep's store; the
  // id there of its run `id`.
  std::int64_t import_trial(std::int64_t trial, std::int64_t id);
  Job job_for(const SweepTrialRecord& trial) const;
  // Feeds the scheduler the rungs the trial's run met since last asked;
  // with `act`, a trial told to stop is interrupted. Returns whether it changed.
  bool watch_rungs(SweepTrialRecord& trial, const TrialRun& run, bool act);
  void on_tick();
  void on_finished(const Finished& finished);
  void record(const SweepTrialRecord& trial);
  std::string status_line(std::size_t running) const;

  const SweepSpec& spec_;
  std::vector<SweepTrialRecord> trials_;  // by trial number
  SweepSetup setup_;
  RunStore& store_;
  TrialScheduler scheduler_;
  std::map<std::int64_t, std::size_t> rungs_seen_;  // trial -> rung values fed to the scheduler
  std::set<std::int64_t> stopping_;                 // interrupted by the scheduler
  Executor& executor_;
  std::size_t jobs_ = 0, ended_ = 0;
  double job_seconds_ = 0;
  bool stopped_ = false;
  std::optional<std::int64_t> best_;
};

}  // namespace orchestrate::sweep

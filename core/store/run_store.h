// The run store: every run, its resolved recipe, plugins, parameters,
// metrics, per-step timings, events, checkpoints and transfer-learning
// tensors, in one SQLite file, so runs can be listed, compared, reported on
// and resumed after the fact.
//
// Schema: share/sql/run_store.sql (embedded at build time). Several processes
// may write the same file at once (WAL journal, busy timeout, every write in a
// BEGIN IMMEDIATE transaction). Every failure is an orchestrate::Error whose
// message names the database file. One RunStore may be shared by threads
// (mutexes guard it); a moved-from RunStore may only be destroyed or assigned.
//
// Crash safety. While a run of this process is running, a background thread
// of the store writes buffered rows and records a heartbeat at least every
// flush interval, so a run that dies loses at most one interval of steps, and
// readers can tell it died: a run still marked running whose process is gone
// (same host) or whose heartbeat is stale is reported with status "lost".
// The write paths training uses (record_step, record_metric, record_event,
// forget_checkpoint, flush; not record_checkpoint) never throw for a busy or
// briefly failing database: the rows stay buffered, one warning goes to
// stderr, and they are written, in order, at a later flush (the background
// one, at the latest). A failure that cannot heal (a constraint, such as an
// unknown run id) still throws, and drops the row that caused it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/run_filter.h"
#include "store/run_records.h"
#include "store/sweep_records.h"

namespace orchestrate {

class RunStore {
 public:
  // The store file when nothing names one, in the current directory.
  static constexpr const char* kDefaultFile = "orchestrate.db";
  // Which store a command uses, the one place that orders the sources: the
  // command's --db (`flag`), then $ORCHESTRATE_DB (set and not empty), then
  // the recipe's [log] db (`recipe_db`), then kDefaultFile. Flag, then
  // environment, then file, as git, cargo and kubectl order them: a recipe
  // committed with a [log] db must not override the store the user chose
  // for this shell. Empty strings are not given.
  static std::string resolve_path(const std::string& flag, const std::string& recipe_db = "");
  // Neither a flag nor a recipe: $ORCHESTRATE_DB, else kDefaultFile.
  static std::string default_path() { return resolve_path(""); }

  // read_write: opens or creates the file (and its parent directories) and
  // brings its schema up to date. Refuses, with an Error naming the path, a
  // file that is not an orchestrate run store or one written by a newer
  // orchestrate. read_only: opens an existing store of this build's schema
  // without writing anything (an older schema is an Error saying how to
  // upgrade it; see check_run_store_schema_for_reading); every write throws.
  explicit RunStore(const std::string& path, StoreAccess access = StoreAccess::read_write);
  ~RunStore();  // stops the background thread, writes buffered rows; never throws (a failure goes to stderr)
  RunStore(RunStore&&) noexcept;
  RunStore& operator=(RunStore&&) noexcept;
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  const std::string& path() const;

  // How often, at the latest, buffered rows are written and running runs of
  // this process beat (default kDefaultFlushInterval; beats come at least
  // every 10 s whatever it is); may be changed during a run. Readers report a
  // run as lost after staleness_limit_s(their flush interval) without a beat
  // (run_liveness.h). Throws unless 0 < interval <= 1 day.
  static constexpr std::chrono::duration<double> kDefaultFlushInterval{10.0};
  void set_flush_interval(std::chrono::duration<double> interval);
  // How long a write waits for another process's lock before it counts as
  // busy (default 5 s).
  void set_busy_timeout(std::chrono::milliseconds timeout);

  // Inserts the run (status running, started_at and heartbeat now, pid this
  // process) with its plugins and params, in one transaction; returns its id.
  // Starts the background flush and heartbeat.
  std::int64_t begin_run(const RunRecord& run);
  // Recorded with every run begin_run starts from now on. Tag keys must be
  // unique (a repeated one fails begin_run's constraint).
  void set_invocation(RunInvocation invocation);

  // Takes up an ended or lost run again from its checkpoint at `from_step`,
  // in one transaction: status running, ended_at and error cleared, pid, host
  // and heartbeat those of this process, resumed_count + 1; the run's step
  // timings, metrics and checkpoints after `from_step` are deleted (the
  // resumed run does those steps again), and an event of kind "resume" says
  // `message` and how many rows went. Throws for an unknown run and for a run
  // that is running and not lost (another process still trains it).
  void resume_run(std::int64_t run_id, std::int64_t from_step, const std::string& message);

  // Buffered in memory and written in one transaction per 200 rows, at least
  // once per flush interval, or on flush()/finish_run()/destruction: a step
  // costs a few microseconds, not a disk commit. Buffered rows are not
  // visible to readers until written.
  void record_step(std::int64_t run_id, const StepTiming& timing);

  // Written at once, with every buffered row before them (so a reader sees
  // each step up to a checkpoint with it), unless the database is busy (see
  // the top of this file). Their times are those of the call.
  void record_metric(std::int64_t run_id, std::int64_t step, std::int64_t epoch, const std::string& name,
                     double value);
  // Several metrics of one step, written by the store's background thread
  // within kMetricWriteDelay (with every row buffered before them, in one
  // commit), so a training loop logging every step never waits for a disk
  // commit and many log points share one. In this process they are written
  // before anything that is written at once (an event, a checkpoint) and by
  // flush()/finish_run(); with no run of this store running (no background
  // thread) they are written at once, as record_metric writes.
  static constexpr std::chrono::duration<double> kMetricWriteDelay{0.5};
  using MetricValues = orchestrate::MetricValues;
  void record_metrics(std::int64_t run_id, std::int64_t step, std::int64_t epoch, const MetricValues& values);
  void record_event(std::int64_t run_id, const std::string& kind, const std::string& message);
  // Called, on the recording thread, with every step row and metric this
  // store is given, as it is given (before it is written): what a live view
  // of the run (a TensorBoard event file) follows. One observer; an empty
  // function is none.
  struct RecordObserver {
    std::function<void(std::int64_t run_id, const StepTiming& timing)> step;
    std::function<void(std::int64_t run_id, std::int64_t step, const MetricValues& values)> metrics;
  };
  void observe(RecordObserver observer);
  // Written at once, with every buffered row before it; the one write path
  // above that throws for a busy database (after the busy timeout): a
  // checkpoint is published only once the store lists it (checkpointer.cpp),
  // so a kill cannot leave one on disk that the store does not know of. A
  // record that fails is withdrawn, never written later.
  void record_checkpoint(const CheckpointRecord& checkpoint);
  // Deletes the record of a checkpoint file that was pruned; none is fine.
  void forget_checkpoint(std::int64_t run_id, const std::string& path);

  // Replaces what is recorded about the run's tensors, in one transaction.
  // Throws for an action not in kTensorActions.
  void record_tensors(std::int64_t run_id, const std::vector<TensorRecord>& tensors);

  // The peak recorded for this host, device, precision and threads, if any;
  // recording one replaces the one before (a new measurement).
  std::optional<DevicePeak> device_peak(const std::string& host, const std::string& device,
                                        const std::string& precision, int threads) const;
  void record_device_peak(const DevicePeak& peak);
  // Every peak recorded for `host`, by device, precision and threads.
  std::vector<DevicePeak> device_peaks(const std::string& host) const;

  // Sweeps (run_store_sweeps.cpp). begin_sweep inserts the sweep (state
  // running, started now, this host and process) and its trials (pending),
  // in one transaction, and returns its id; take_up_sweep marks an ended or
  // lost sweep running again in this process (`sweep --resume`).
  std::int64_t begin_sweep(const SweepRecord& sweep, const std::vector<SweepTrialRecord>& trials);
  void take_up_sweep(std::int64_t sweep_id, const std::string& command_line);
  void record_sweep_trial(const SweepTrialRecord& trial);  // by (sweep_id, trial); all but overrides
  void set_sweep_best(std::int64_t sweep_id, std::optional<std::int64_t> best_trial);
  void end_sweep(std::int64_t sweep_id, const std::string& state);  // finished, stopped or failed
  // Newest first. A sweep stored as running whose controller was on this
  // host and is gone reads as "lost" (resume it with `sweep --resume`).
  std::vector<SweepRecord> list_sweeps() const;
  // By id, else the newest sweep of that name; nullopt for none.
  std::optional<SweepDetails> find_sweep(const std::string& id_or_name) const;

  // Copies every run of the store file `source` into this one, with its rows
  // in every table (params, plugins, tags, metrics, steps, events,
  // checkpoints, tensors), in one transaction (run_store_import.cpp).
  // Idempotent: a run imported before from the same file (its absolute path
  // and its id there) is replaced in place and keeps its id here, so a store
  // imported again after its runs went on brings them up to date and never
  // duplicates one. Returns each source run's id here. Throws Error for a
  // file that is not a run store of this build's schema, and for this store.
  std::map<std::int64_t, std::int64_t> import_runs(const std::string& source);

  // Writes every buffered row now (a busy database keeps them buffered).
  void flush();

  // Writes every buffered row, then ends a running run: status becomes
  // `status` (finished, failed or interrupted), ended_at now. A busy database
  // is retried for up to 30 s before this throws. Throws for an unknown run,
  // for status running or lost, and for a run that has already ended (an
  // ended run's status is final). The background thread stops with the last
  // running run of this store.
  void finish_run(std::int64_t run_id, RunStatus status, const std::string& error = "");

  std::vector<RunSummary> list_runs(std::size_t limit = 0) const;  // newest first; 0 = all
  // The runs `filter` selects, in its order (run_filter.h). Three statements
  // in all, whatever the number of runs: the runs, their final metrics, their
  // tags. Throws UsageError for a bad filter.
  std::vector<RunSummary> find_runs(const RunFilter& filter) const;
  RunDetails run_details(const RunSummary& run) const;
  // A numeric argument is a run id (falling back to a run of that name if no
  // run has that id); otherwise the newest run with that name.
  std::optional<RunSummary> find_run(const std::string& id_or_name) const;
  // The job's steps (rank 0's rows), ordered by step; step_timings(run, r):
  // the rows of rank r of a data-parallel run.
  std::vector<StepTiming> step_timings(std::int64_t run_id, int rank = 0) const;
  std::string resolved_recipe(std::int64_t run_id) const;            // throws for an unknown run
  std::vector<CheckpointRecord> checkpoints(std::int64_t run_id) const;  // oldest (lowest step) first
  std::vector<TensorRecord> tensors(std::int64_t run_id) const;          // in the order recorded
  std::vector<EventRecord> events(std::int64_t run_id) const;            // in the order recorded

 private:
  struct Impl;  // keeps SQLiteCpp out of this header
  std::unique_ptr<Impl> impl_;
};

}  // namespace orchestrate

// The run store: every run, its resolved recipe, plugins, parameters,
// metrics, per-step timings and events, in one SQLite file, so runs can be
// listed, compared and reported on after the fact.
//
// Schema: share/sql/run_store.sql (embedded at build time). Several processes
// may write the same file at once (WAL journal, busy timeout, every write in a
// BEGIN IMMEDIATE transaction). Every failure is an orchestrate::Error whose
// message names the database file. One RunStore may be shared by threads (a
// mutex guards it); a moved-from RunStore may only be destroyed or assigned.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace orchestrate {

enum class RunStatus { running, finished, failed, interrupted };
const char* to_string(RunStatus status);

struct PluginRecord {
  std::string name, version, library_path, sha256;  // sha256 may be empty
};

// What is known about a run when it starts.
struct RunRecord {
  std::string name, recipe_path, resolved_recipe /*TOML text*/, orchestrate_version, torch_version, host,
      device, git_revision;
  int world_size = 1;
  std::vector<PluginRecord> plugins;
  std::vector<std::pair<std::string, std::string>> params;  // flattened "optimizer.lr" -> "0.001"
};

// One training step, split into its phases. A NaN (e.g. a diverged loss) is
// stored as NULL and read back as NaN.
struct StepTiming {
  std::int64_t step = 0, epoch = 0, images = 0;
  double data_wait_s = 0, compute_s = 0 /*forward+backward*/, sync_s = 0, optimizer_s = 0, total_s = 0, loss = 0,
         learning_rate = 0;
};

struct RunSummary {
  std::int64_t id = 0;
  std::string name, status, device;
  std::string started_at, ended_at;  // ISO-8601 UTC ("2025-01-31T12:00:00.123Z"); ended_at "" while running
  double duration_s = 0;             // ended_at - started_at; time so far while running
  std::map<std::string, double> final_metrics;  // last value (highest step) of each metric
  std::string error;                            // why a run failed; "" otherwise
};

class RunStore {
 public:
  // $ORCHESTRATE_DB if set and not empty, else "orchestrate.db" in the current directory.
  static std::string default_path();

  // Opens or creates the file (and its parent directories) and brings its
  // schema up to date. Refuses, with an Error naming the path, a file that is
  // not an orchestrate run store or one written by a newer orchestrate.
  explicit RunStore(const std::string& path);
  ~RunStore();  // flushes buffered steps; never throws (a failure is reported on stderr)
  RunStore(RunStore&&) noexcept;
  RunStore& operator=(RunStore&&) noexcept;
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  const std::string& path() const;

  // Inserts the run (status running, started_at now) with its plugins and
  // params, in one transaction; returns its id.
  std::int64_t begin_run(const RunRecord& run);

  // Buffered in memory and written in one transaction per 200 rows, or on
  // flush()/finish_run()/destruction: a step costs a few microseconds, not a
  // disk commit. Buffered rows are not visible to readers until written.
  void record_step(std::int64_t run_id, const StepTiming& timing);

  // Written immediately: metrics and events are rare.
  void record_metric(std::int64_t run_id, std::int64_t step, std::int64_t epoch, const std::string& name,
                     double value);
  void record_event(std::int64_t run_id, const std::string& kind, const std::string& message);

  // Writes the buffered step rows.
  void flush();

  // Flushes, then ends a running run: status becomes `status` (finished,
  // failed or interrupted), ended_at now. Throws for an unknown run, for
  // status running, and for a run that has already ended (an ended run's
  // status is final).
  void finish_run(std::int64_t run_id, RunStatus status, const std::string& error = "");

  std::vector<RunSummary> list_runs(std::size_t limit = 0) const;  // newest first; 0 = all
  // A numeric argument is a run id (falling back to a run of that name if no
  // run has that id); otherwise the newest run with that name.
  std::optional<RunSummary> find_run(const std::string& id_or_name) const;
  std::vector<StepTiming> step_timings(std::int64_t run_id) const;  // ordered by step
  std::string resolved_recipe(std::int64_t run_id) const;            // throws for an unknown run

 private:
  struct Impl;  // keeps SQLiteCpp out of this header
  std::unique_ptr<Impl> impl_;
};

}  // namespace orchestrate

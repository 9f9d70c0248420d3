// What the run store records, as plain types: a run, its steps, events,
// checkpoints and tensors. The engine builds and hands these over; only the
// files that read or write the store need RunStore itself (run_store.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace orchestrate {

// `lost` is never stored: reads report it for a run stored as running whose
// process is gone (see run_liveness.h).
enum class RunStatus { running, finished, failed, interrupted, lost };
const char* to_string(RunStatus status);

// What a run did: train, or evaluate weights another run saved (`orchestrate eval`).
enum class RunKind { train, eval };
const char* to_string(RunKind kind);

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
  RunKind kind = RunKind::train;
  // The run this one derives from (an eval: the run whose checkpoint it
  // evaluates); 0: none. begin_run throws for a run not in the store.
  std::int64_t source_run_id = 0;
};

// One training step, split into its phases. A NaN (e.g. a diverged loss) is
// stored as NULL and read back as NaN.
struct StepTiming {
  std::int64_t step = 0, epoch = 0, images = 0;
  int rank = 0;  // in a data-parallel job; rank 0's row is the job's step (see migration 4)
  double data_wait_s = 0, compute_s = 0 /*forward+backward*/, sync_s = 0, optimizer_s = 0, total_s = 0, loss = 0,
         learning_rate = 0;
  // This rank's gradient payload for the update (all-reduce or compressed
  // all-gather); 0 when it communicated nothing (training alone). NULL in the store then.
  std::int64_t bytes_sent = 0;
};

struct RunSummary {
  std::int64_t id = 0;
  std::string name, status, device;  // status: to_string() of a RunStatus, "lost" included
  std::string started_at, ended_at;  // ISO-8601 UTC ("2025-01-31T12:00:00.123Z"); ended_at "" while running or lost
  // ended_at - started_at; time so far while running; last_seen_at - started_at
  // when lost; less the time it was stopped before each resume (paused_s)
  double duration_s = 0;
  std::map<std::string, double> final_metrics;  // last value (highest step) of each metric
  std::string error;                            // why a run failed; "" otherwise
  std::string last_seen_at;       // its last heartbeat (its start if it never beat); ISO-8601 UTC
  std::int64_t pid = 0;           // the process that trains (or trained) it; 0 if unknown
  std::string host;               // the machine that process runs on
  std::int64_t resumed_count = 0;  // times it was resumed from a checkpoint
  std::string recipe_path;         // the recipe file as given to `orchestrate run`
  std::string kind = "train";      // to_string() of a RunKind
  std::int64_t source_run_id = 0;  // the run this one derives from; 0: none
  std::map<std::string, std::string> tags;  // the user's labels (orchestrate run --tag key=value)
};

// How `orchestrate run` was invoked and the user's labels for its runs: what
// the command knows and the trainer, which builds the RunRecord, does not.
struct RunInvocation {
  std::string command_line;  // shell-quoted, e.g. "orchestrate run r.toml --set 'optimizer.lr=0.1'"
  std::vector<std::pair<std::string, std::string>> tags;
  std::int64_t source_run_id = 0;  // the run this one repeats (orchestrate rerun); 0: none
};

// Everything recorded about one run, for `orchestrate show` and `compare`.
struct RunDetails {
  RunSummary summary;
  RunRecord record;  // as begun: recipe, versions, host, device, plugins, params
  std::string command_line;  // "" for a run recorded before command lines were
  struct Extremes {
    double min = 0, max = 0;  // over every value recorded; NaN values are left out (both NaN if all were)
  };
  std::map<std::string, Extremes> metric_extremes;  // by metric name
};

// How a RunStore opens its file.
enum class StoreAccess {
  read_write,  // creates the file and its directories, migrates the schema, records runs
  read_only,   // queries: never creates, migrates or writes; works on a file the user cannot write
};

// A checkpoint file written for a run.
struct CheckpointRecord {
  std::int64_t run_id = 0, step = 0, epoch = 0, bytes = 0;
  std::string path;
  std::string created_at;  // ISO-8601 UTC; record_checkpoint fills in now when empty
  std::string reason;      // interval, epoch, time, end or signal
  std::map<std::string, double> metrics;  // the run's metrics when it was written; non-finite reads back as NaN
};

// What transfer learning did with one tensor of the model.
struct TensorRecord {
  std::string name, shape /*e.g. "[64, 3, 7, 7]"*/, action, detail;
};
// The actions record_tensors accepts.
inline constexpr const char* kTensorActions[] = {"loaded", "excluded", "frozen", "missing", "unexpected",
                                                 "mismatched"};

struct EventRecord {
  std::string time;  // ISO-8601 UTC, when it was recorded
  std::string kind, message;
};

// Metrics a training run records before its first step (at step 0), which
// `report throughput` turns into achieved FLOP/s and model FLOPs utilisation.
inline constexpr const char* kTrainFlopsPerImageMetric = "perf/train_flops_per_image";  // forward + backward
inline constexpr const char* kPeakFlopsMetric = "perf/peak_flops_per_s";                 // measured, one device
inline constexpr const char* kDatasheetFlopsMetric = "perf/datasheet_flops_per_s";       // a listed GPU's
// Recorded at a run's end on CUDA (engine/train/device_busy.h): the share of
// the training time the GPU ran kernels, 0 to 1, as NVML measures it.
inline constexpr const char* kDeviceBusyMetric = "perf/device_busy_share";

// A device's measured peak of matrix products (RunStore::device_peak): what
// a run's model FLOPs utilisation is taken against.
struct DevicePeak {
  std::string host, device;  // device: the CPU's or GPU's model name
  std::string precision;     // [precision] mode
  int threads = 0;           // intra-op threads on a CPU; 0 on a GPU
  double flops_per_s = 0;
  std::string method;       // what was timed
  std::string measured_at;  // ISO-8601 UTC; set by the store when recorded
};

// Several metrics of one step, recorded together (RunStore::record_metrics).
using MetricValues = std::vector<std::pair<std::string, double>>;

}  // namespace orchestrate

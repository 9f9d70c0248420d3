// What limits a run's training speed, and the recipe change that addresses
// it: the conclusion `report throughput` draws from a run's phase shares,
// where MLflow, Aim and TensorBoard leave it to the reader.
//
// The run's time is split four ways, as shares of its training time (the
// steps plus evaluation):
//   input          the steps' data wait: the model waited for a batch;
//   communication  the steps' gradient sync (all-reduce or compressed exchange);
//   overhead       evaluation, and what the steps spent outside their phases
//                  (logging, checkpoints, the run store);
//   compute        forward, backward and the optimizer: what is left.
// The verdict names the largest of input, communication and overhead when it
// takes at least kLimitingShare of the time, and compute otherwise; on a GPU,
// compute is launch when the device waits on kernel launches and the host,
// which a faster precision would not help: measured, when the run recorded
// how much of its time the GPU ran kernels (NVML; under kLaunchBoundBusyShare
// is launch), and otherwise inferred from arithmetic that fills under
// kLaunchBoundMfu of the measured peak in a step shorter than
// kLaunchBoundStepS. The fixes
// are recipe keys with values for this run (its resolved recipe and host),
// the most effective first.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/reports.h"
#include "engine/recipe/core_defaults.h"
#include "store/run_store.h"

namespace orchestrate {

// A phase that takes this share of the training time limits the run: a
// fifth of a GPU's time idle for input is worth a recipe change.
inline constexpr double kLimitingShare = 0.2;
// A GPU step this short at this little of the peak is launch-bound: the
// Fashion-MNIST ConvNet at batch 128 on an H200 (3.1 ms, MFU 0.2 %) is;
// ResNet-50 fp16 at batch 256 (44 ms, MFU 19 %) is not.
inline constexpr double kLaunchBoundMfu = 0.02;
inline constexpr double kLaunchBoundStepS = 0.02;
// A GPU that ran kernels under this share of a compute-bound run's time sat
// idle between them for at least a fifth of it: the host's launches are the
// limit, as kLimitingShare counts a fifth for the other phases.
inline constexpr double kLaunchBoundBusyShare = 0.8;
// On a CPU, another precision whose measured matrix products are this many
// times faster than the run's is worth trying: bf16 on a Zen 4 EPYC (422
// against 198 GFLOP/s fp32, and 43 fp16) ran the ConvNet 1.34x faster.
inline constexpr double kFasterPrecisionPeakRatio = 2.0;

// What the verdict reads about a run besides its step timings.
struct RunFacts {
  std::map<std::string, std::string> params;  // the resolved recipe, flattened: "run.num_workers" -> "2"
  int cores = 0;                              // usable cores on the run's host; 0: not recorded
  // The host's measured matmul peaks of the run's device and threads in the
  // other precisions ("bf16" -> FLOP/s), from the store's device_peaks.
  std::map<std::string, double> other_precision_peaks;
  bool smoke = false;  // tagged smoke=true, as `orchestrate run --smoke` tags its runs
  // Where a key the run did not record (an older run) or recorded unreadably
  // takes its value from: the key's spec.
  const CoreDefaults* defaults = &CoreDefaults::builtin();
  std::string param(const std::string& key) const;
  double number(const std::string& key) const;
};

// The run's params and the cores its "threads" event recorded.
RunFacts run_facts(const RunStore& store, const RunSummary& run,
                   const CoreDefaults& defaults = CoreDefaults::builtin());

struct Verdict {
  // "input", "compute", "launch", "communication" or "overhead"; "" without
  // measured steps, or when the run's steps cannot be judged (not_judged).
  std::string limit;
  // Why a run with measured steps gets no verdict, or "": a smoke run, whose
  // speed says nothing of the recipe's, and a run too short to leave its
  // first step out, whose set-up work (cuDNN's autotuning: seconds on a GPU)
  // would pass for the step's own.
  std::string not_judged;
  double input_share = 0, communication_share = 0, overhead_share = 0, compute_share = 0;  // of training time
  std::string evidence;            // the figures behind the limit, one line
  std::vector<std::string> fixes;  // recipe changes, "[run] num_workers = 2 (now 0; ...)"
};

Verdict bottleneck_verdict(const ThroughputRow& row, const RunFacts& facts);

// With one row per rank (report throughput --per-rank): the rank whose busy
// time per step (everything but waiting in the gradient sync) is longest,
// when it exceeds the other ranks' median by more than 10 %; in a
// synchronous job the others wait for it in their sync.
struct Straggler {
  std::string rank;
  double busy_s = 0;         // its median step's time outside the sync
  double others_busy_s = 0;  // the other ranks' median of the same
};
std::optional<Straggler> find_straggler(const std::vector<ThroughputRow>& ranks);

}  // namespace orchestrate

namespace orchestrate {

// The verdict as columns of a throughput table, one verdict per row (rank
// rows get none): "limit", and for programs (csv, json) "evidence" and
// "fixes" (a list; joined by "; " in csv).
void add_verdict_columns(Table& table, const std::vector<ThroughputRow>& rows, const std::vector<Verdict>& verdicts);

// For people, under the table: each run's limit, evidence and fixes, and a
// straggler when there is one.
std::string verdict_text(const std::vector<ThroughputRow>& rows, const std::vector<Verdict>& verdicts,
                         const std::map<std::int64_t, Straggler>& stragglers);

}  // namespace orchestrate

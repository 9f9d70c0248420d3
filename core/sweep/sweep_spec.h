// A sweep spec: the search space over a base recipe's keys, how many trials,
// the metric that ranks them, and what each trial may use. TOML, in a file
// of its own that names the base recipe (recipes/sweeps/*.toml):
//
//   [sweep]
//   recipe = "../fashion_mnist_fast.toml"   # relative to this file, or a shipped recipe's name
//   metric = "eval/top1"                    # mode = "max" (default) or "min"
//   trials = 16                             # random and sobol; a grid has one per combination
//   sampler = "random"                      # grid | random | sobol
//   concurrency = 2                         # trials at once
//   threads = 1                             # cores per trial
//   executor = "local"                      # or "slurm": one job array, [sweep.slurm]
//   [sweep.parameters]
//   "optimizer.lr" = { log = [0.01, 0.3] }  # also range = [a, b], int = [a, b]
//   "run.batch_size" = [64, 128]            # a list: grid values, or choices
//
// Checked like a recipe: every problem at once, each located
// (file:line:column), in one RecipeError. Free of LibTorch: the fuzz build
// compiles it, and the engine checks what needs the plugins (each trial's
// recipe, the metric) once this passes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace orchestrate::sweep {

// Declared once here and in share/doc/limits.md.
inline constexpr std::int64_t kMaxTrials = 10000;
inline constexpr std::size_t kMaxParameters = 64;
inline constexpr std::size_t kMaxSpecBytes = 1 << 20;  // 1 MiB

enum class Sampler { grid, random, sobol };
enum class Mode { max, min };
enum class Scale { linear, log, integer };

struct Range {
  double low = 0;
  double high = 0;
  Scale scale = Scale::linear;
};

struct Parameter {
  std::string key;                  // a recipe key, "optimizer.lr"
  std::vector<std::string> values;  // a list: each value as TOML text ("0.1", "\"fp32\"")
  std::optional<Range> range;       // or a range to sample
  std::string where;                // "file:line:column", for later messages
};

enum class Scheduler { none, asha, median };
enum class RungUnit { steps, epochs };

// Early stopping: ASHA (asynchronous successive halving, as Ray Tune's
// AsyncHyperBandScheduler) or the median rule, at rungs of `grace` x
// reduction_factor^k steps or epochs.
struct EarlyStopping {
  Scheduler scheduler = Scheduler::none;
  RungUnit unit = RungUnit::epochs;
  std::int64_t grace = 1;
  std::int64_t reduction_factor = 3;
  std::int64_t min_samples = 3;  // the median rule: other trials at a rung before it stops any
};

enum class ExecutorKind { local, slurm };

// [sweep.slurm]: what the job array asks of the cluster beyond cores and
// GPUs per trial (from threads x nproc and gpus).
struct SlurmSettings {
  std::string partition;             // --partition, "" for the cluster's default
  std::string time;                  // --time per task, "" for the partition's default
  std::vector<std::string> sbatch;   // further sbatch options, as written ("--account=ml")
};

struct SweepSpec {
  std::string path;         // the spec file
  std::string text;         // its text, as parsed (kept with a recorded sweep)
  std::string name;         // [sweep] name, or the file's stem
  std::string recipe;       // as written
  std::string metric;       // "eval/top1"
  std::string metric_where; // "file:line:column" of the metric key
  Mode mode = Mode::max;
  Sampler sampler = Sampler::grid;
  std::int64_t trials = 0;  // resolved: the grid's size for a grid
  int concurrency = 1;      // slurm: the array's %N (the whole array when not given)
  ExecutorKind executor = ExecutorKind::local;
  SlurmSettings slurm;
  int threads = 1;          // cores per trial
  int gpus = 0;             // GPUs per trial
  int nproc = 1;            // data-parallel ranks per trial
  std::uint64_t seed = 0;
  std::vector<Parameter> parameters;
  EarlyStopping early_stopping;
};

// Parses and checks `text`, the spec file `path`. `usable_cores`: the cores
// this process may run on (concurrency x threads x nproc may not exceed them);
// `usable_gpus` the same for gpus. Neither binds a Slurm sweep: the cluster
// has its own. Throws RecipeError with every problem.
SweepSpec parse_sweep_spec(std::string_view text, const std::string& path, int usable_cores, int usable_gpus);

// Reads the file first: a missing or unreadable file, or one over
// kMaxSpecBytes, is a one-line RecipeError.
SweepSpec read_sweep_spec(const std::string& path, int usable_cores, int usable_gpus);

// One trial: its number (0, 1, ...) and the --set overrides that make it,
// "key" -> TOML text.
struct Trial {
  std::int64_t index = 0;
  std::vector<std::pair<std::string, std::string>> overrides;
};

// Every trial of the spec, the same for the same spec and seed: a grid's
// combinations in order (the last parameter varying fastest), or `trials`
// draws, uniform or on the log scale (Sobol's low-discrepancy points for
// sobol), a list's values drawn as choices.
std::vector<Trial> sample_trials(const SweepSpec& spec);

}  // namespace orchestrate::sweep

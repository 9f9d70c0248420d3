// The core's recipe settings as typed values, read from a validated Recipe
// once (recipe_settings.h), so the engine never looks keys up by string. No
// field has a default here: every key's default is its spec's, in
// core_settings_tables.cpp. Free of LibTorch, like the specs.
#pragma once

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "engine/dim_reduce/dim_reduce_settings.h"
#include "engine/precision/loss_scaler_settings.h"
#include "engine/precision/precision_mode.h"
#include "orchestrate/params.h"

namespace orchestrate {


enum class NonFinitePolicy { stop, skip };
enum class MemoryFormat { automatic, channels_last, contiguous };
enum class WarmupShape { none, linear, exponential };
enum class CudaGraphMode { automatic, off };
enum class DataOnDevice { automatic, on, off };
// Updates a process runs eagerly before [run] cuda_graph = "auto" captures
// (cuDNN autotuning, the allocator's cache and lazy set-up stay outside the graph).
inline constexpr std::int64_t kEagerUpdatesBeforeCapture = 3;

struct RunSettings {
  std::string name;
  std::uint64_t seed{};
  std::string device{};
  std::int64_t epochs{};
  std::int64_t max_steps{};
  std::int64_t batch_size{};
  int num_workers{};
  int prefetch_batches{};
  std::int64_t shuffle_buffer_size{};  // > 0: sequential datasets are shuffled through a buffer of this many
  std::int64_t cache_mb{};             // decoded examples kept in memory, per split; 0: none
  std::int64_t log_every{};
  int threads{};
  NonFinitePolicy on_nonfinite{};
  CudaGraphMode cuda_graph{};
  DataOnDevice data_on_device{};
  bool cudnn_benchmark{};
  int cudnn_benchmark_limit{};  // candidate algorithms timed per convolution; 0: all
};

struct ParameterGroupRule {
  std::string pattern;
  std::regex match;
  double lr_scale{};
  double weight_decay_scale{};
};

// A component named in an array of tables ([[optimizer.wrappers]], [[hooks]]).
struct ComponentChoice {
  std::string plugin;
  Params params;
};

struct OptimizerSettings {
  std::string plugin;
  Params params;
  double base_lr{};  // the component's `lr`
  double weight_decay{};
  bool decay_norm_and_bias{};
  std::vector<std::string> no_decay_patterns;
  std::vector<std::regex> no_decay;
  std::vector<ParameterGroupRule> groups;
  std::vector<ComponentChoice> wrappers;
};

struct ScheduleSettings {
  std::string plugin;
  Params params;
  WarmupShape warmup{};
  double warmup_length{};
  bool warmup_in_epochs{};
  double warmup_start_lr{};
};

struct PrecisionSettings {
  PrecisionMode mode{};
  LossScalerSettings scaler;  // as the recipe says; scaler.mode is loss_scaling
  // What the run scales with: loss scaling exists for fp16's narrow exponent
  // range, so bf16 and fp32 scale nothing, whatever loss_scaling says.
  LossScalerSettings loss_scaler() const {
    LossScalerSettings used = scaler;
    if (mode != PrecisionMode::fp16) used.mode = LossScaleMode::off;
    return used;
  }
};

struct EvalSettings {
  bool enabled{};
  std::int64_t every_epochs{};
  std::int64_t batch_size{};
};

struct CheckpointSettings {
  std::string dir;  // "": <run store's directory>/checkpoints/<store file>/run-<id>
  std::int64_t every_steps{};
  std::int64_t every_epochs{};
  double save_interval_secs{};
  std::int64_t keep_max{};  // 0: keep all
  bool at_end{};
  bool on_signal{};
  std::string init_from;
  std::vector<std::string> exclude;    // globs; "@logits" is the model's logits pattern
  bool strict{};
  std::vector<std::string> trainable;  // globs; everything else is frozen
  std::vector<std::string> frozen;     // globs
};

// [export]: a serving export when training ends (serving_export.h).
struct ExportSettings {
  std::string dir;  // the model repository; "": no export
  std::string name;  // the model's directory in it; "": the run name
  std::int64_t top_k{};
  std::int64_t max_batch_size{};
};

// [distributed]: used when the run is one rank of a data-parallel job.
struct DistributedSettings {
  std::string backend{};
  double bucket_size_mb{};
  double timeout_s{};
};

// [gradient_compression]: "none" builds no compressor.
struct CompressionSettings {
  std::string plugin{};
  Params params;
};

// [snapshots]: stage 1 of dimension-reduce training.
struct SnapshotSettings {
  std::string dir;  // "": <run store's directory>/snapshots/<store file>/run-<id>
  SnapshotPolicy policy;
};

struct Settings {
  RunSettings run;
  std::string data_plugin;
  Params data_params;
  std::string preprocessing_plugin;  // [preprocessing]; "none" when the recipe has no such table
  Params preprocessing_params;
  std::string model_plugin;
  Params model_params;
  MemoryFormat memory_format{};
  double label_smoothing{};
  double aux_weight{};  // < 0: each auxiliary classifier's declared weight
  OptimizerSettings optimizer;
  ScheduleSettings schedule;
  PrecisionSettings precision;
  EvalSettings eval;
  CheckpointSettings checkpoint;
  ExportSettings export_;
  DistributedSettings distributed;
  CompressionSettings compression;
  SnapshotSettings snapshots;
  DimReduceSettings dim_reduce;  // [dim_reduce]: stage 2
  std::vector<ComponentChoice> hooks;  // in recipe order
  std::string db;
  std::string progress{};
  double flush_seconds{};  // step rows reach the store at least this often
  std::string tensorboard;  // [log] tensorboard: live event files under this directory; "" none
};

}  // namespace orchestrate

// The core's recipe settings as typed values, read from a validated Recipe
// once, so the engine never looks keys up by string.
#pragma once

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "dim_reduce/dim_reduce_training.h"
#include "precision/autocast_scope.h"
#include "precision/loss_scaler.h"
#include "recipe.h"

namespace orchestrate {

enum class NonFinitePolicy { stop, skip };
enum class MemoryFormat { automatic, channels_last, contiguous };
enum class WarmupShape { none, linear, exponential };

struct RunSettings {
  std::string name;
  std::uint64_t seed = 42;
  std::string device = "auto";
  std::int64_t epochs = 1;
  std::int64_t max_steps = 0;
  std::int64_t batch_size = 64;
  int num_workers = 2;
  int prefetch_batches = 4;
  std::int64_t shuffle_buffer_size = 0;  // > 0: sequential datasets are shuffled through a buffer of this many
  std::int64_t cache_mb = 0;             // decoded examples kept in memory, per split; 0: none
  std::int64_t log_every = 50;
  int threads = 0;
  NonFinitePolicy on_nonfinite = NonFinitePolicy::stop;
};

struct ParameterGroupRule {
  std::string pattern;
  std::regex match;
  double lr_scale = 1.0;
  double weight_decay_scale = 1.0;
};

// A component named in an array of tables ([[optimizer.wrappers]], [[hooks]]).
struct ComponentChoice {
  std::string plugin;
  Params params;
};

struct OptimizerSettings {
  std::string plugin;
  Params params;
  double base_lr = 0.0;  // the component's `lr`
  double weight_decay = 0.0;
  bool decay_norm_and_bias = false;
  std::vector<std::string> no_decay_patterns;
  std::vector<std::regex> no_decay;
  std::vector<ParameterGroupRule> groups;
  std::vector<ComponentChoice> wrappers;
};

struct ScheduleSettings {
  std::string plugin;
  Params params;
  WarmupShape warmup = WarmupShape::none;
  double warmup_length = 0;
  bool warmup_in_epochs = false;
  double warmup_start_lr = 0;
};

struct PrecisionSettings {
  PrecisionMode mode = PrecisionMode::fp32;
  LossScalerSettings scaler;  // mode off unless fp16
};

struct EvalSettings {
  bool enabled = true;
  std::int64_t every_epochs = 1;
  std::int64_t batch_size = 1000;
};

struct CheckpointSettings {
  std::string dir;  // "": <run store's directory>/checkpoints/run-<id>
  std::int64_t every_steps = 0;
  std::int64_t every_epochs = 1;
  double every_seconds = 0;
  std::int64_t keep_max = 3;  // 0: keep all
  bool at_end = true;
  bool on_signal = true;
  std::string init_from;
  std::vector<std::string> exclude;    // globs; "@logits" is the model's logits pattern
  bool strict = true;
  std::vector<std::string> trainable;  // globs; everything else is frozen
  std::vector<std::string> frozen;     // globs
};

// [export]: a serving export when training ends (serving_export.h).
struct ExportSettings {
  std::string dir;  // the model repository; "": no export
  std::string name;  // the model's directory in it; "": the run name
  std::int64_t top_k = 5;
  std::int64_t max_batch_size = 64;
};

// [distributed]: used when the run is one rank of a data-parallel job.
struct DistributedSettings {
  std::string backend = "auto";
  double bucket_size_mb = 25.0;
  double timeout_s = 60.0;
};

// [gradient_compression]: "none" builds no compressor.
struct CompressionSettings {
  std::string plugin = "none";
  Params params;
};

// [snapshots]: stage 1 of dimension-reduce training.
struct SnapshotSettings {
  std::string dir;  // "": <run store's directory>/snapshots/run-<id>
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
  MemoryFormat memory_format = MemoryFormat::automatic;
  double label_smoothing = 0.0;
  double aux_weight = -1.0;  // < 0: each auxiliary classifier's declared weight
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
  std::string progress = "auto";
  double flush_seconds = 10.0;  // step rows reach the store at least this often
};

// Reads the typed settings of a recipe that load_recipe() validated.
Settings settings_of(const Recipe& recipe);

}  // namespace orchestrate

// The on-disk checkpoint: one directory per saved position of a run.
//
//   <dir>/step-00000300/          a checkpoint after 300 updates
//       model.safetensors         model parameters and buffers (what timm and
//                                 Hugging Face publish weights as)
//       trainer.pt                LibTorch archive: optimizer, wrappers, loss
//                                 scaler, RNG states, half-accumulated gradients
//       recipe.toml               the resolved recipe
//       checkpoint.json           this format's version, the position, the
//                                 metrics, and each file's size; written last
//   <dir>/step-00000300+3/        3 micro-batches into update 301 (a stop in
//                                 the middle of gradient accumulation)
//
// A directory is staged under a hidden name and renamed into place whole
// (durable_file.h), so a crash never leaves a half-written checkpoint under
// a checkpoint's name.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "safetensors.h"

namespace orchestrate {

inline constexpr int kCheckpointFormatVersion = 1;

struct CheckpointMeta {
  int format_version = kCheckpointFormatVersion;
  std::string orchestrate_version;
  std::int64_t run_id = 0;
  std::int64_t step = 0;         // updates applied
  std::int64_t micro_batch = 0;  // micro-batches of update step+1 already accumulated (0: none)
  std::int64_t epoch = 0;        // 1-based epoch of the latest update (0 before the first)
  std::int64_t evaluated_at_step = -1;  // the step of the latest evaluation; -1: none yet
  std::string reason;            // interval, epoch, time, end, signal
  std::string created_at;        // ISO-8601 UTC
  std::string run_name;          // the run's name (its recipe's [run] name or file name)
  std::string model;             // the model component's name
  // What the model was built for, so it can be rebuilt (export, eval) without
  // loading the data set: [channels, height, width], the classes and their
  // names (empty when the data set has none). Older checkpoints lack them:
  // then the recipe's data set says.
  std::vector<std::int64_t> input_shape;
  std::int64_t num_classes = 0;
  std::vector<std::string> class_names;
  // The ranks of the data-parallel job that saved it (1: one process); the
  // global batch is [run] batch_size x world_size. Older checkpoints: 1.
  int world_size = 1;
  std::map<std::string, double> metrics;                  // the newest value of each, at this step
  std::map<std::string, std::string> recipe_params;       // the resolved recipe, flattened
  std::map<std::string, std::int64_t> file_bytes;         // size of each file above
};

struct CheckpointContent {
  CheckpointMeta meta;
  NamedTensors weights;
  std::string trainer_state;  // a serialized torch::serialize::OutputArchive
  std::string recipe_toml;
};

inline constexpr const char* kWeightsFile = "model.safetensors";
inline constexpr const char* kTrainerStateFile = "trainer.pt";
inline constexpr const char* kRecipeFile = "recipe.toml";
inline constexpr const char* kMetaFile = "checkpoint.json";

// "step-00000300", or "step-00000300+3" in the middle of an update.
std::string checkpoint_name(std::int64_t step, std::int64_t micro_batch);

struct WrittenCheckpoint {
  std::string path;
  std::int64_t bytes = 0;
};

// Writes the checkpoint as <directory>/<checkpoint_name>, atomically; fills
// meta.file_bytes. A checkpoint of the same name is replaced.
WrittenCheckpoint write_checkpoint(const std::string& directory, CheckpointContent content);

// Reads and checks checkpoint.json: the format version, and that every file
// is there with the size it was written with (a truncated copy is refused).
// Errors name the path and say what to do.
CheckpointMeta read_checkpoint_meta(const std::string& path);

// True when `path` is a directory holding checkpoint.json.
bool is_checkpoint(const std::string& path);

// The checkpoints directly inside `directory`, oldest position first.
std::vector<std::string> checkpoints_in(const std::string& directory);

// Removes a checkpoint directory (keep_max pruning); staged leftovers of a
// crashed save are removed by `remove_stale_staging`.
void remove_checkpoint(const std::string& path);
void remove_stale_staging(const std::string& directory);

}  // namespace orchestrate

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
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_meta.h"
#include "checkpoint/safetensors.h"

namespace orchestrate {

struct CheckpointContent {
  CheckpointMeta meta;
  NamedTensors weights;
  std::string trainer_state;  // a serialized torch::serialize::OutputArchive
  std::string recipe_toml;
};

struct WrittenCheckpoint {
  std::string path;
  std::int64_t bytes = 0;
};

// Called with the final path and size once every file is staged and synced,
// before the directory takes its name. The run store's row is written here,
// so that a kill -9 can leave a recorded checkpoint that never appeared
// (resume skips a row whose directory is missing) but never a published
// checkpoint that the store does not know of (resume would not find it). A
// throw stops the publication: nothing appears, and the throw goes on.
using BeforePublish = std::function<void(const WrittenCheckpoint&)>;

// Writes the checkpoint as <directory>/<checkpoint_name>, atomically; fills
// meta.file_bytes and meta.file_crc32c. A checkpoint of the same name is
// replaced.
WrittenCheckpoint write_checkpoint(const std::string& directory, CheckpointContent content,
                                   const BeforePublish& before_publish = {});

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

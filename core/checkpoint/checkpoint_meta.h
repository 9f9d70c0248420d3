// checkpoint.json: the description written last into every checkpoint
// directory (checkpoint.h), as text. Free of LibTorch, so the fuzz build
// reads it as the engine does.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
  // Updates an epoch had (data, batch and ranks fix it), so a resume can
  // judge a change of the run's length (resume_length.h). Older: 0, unknown.
  std::int64_t updates_per_epoch = 0;
  std::map<std::string, double> metrics;                  // the newest value of each, at this step
  std::map<std::string, std::string> recipe_params;       // the resolved recipe, flattened
  std::map<std::string, std::int64_t> file_bytes;         // size of each file above
  // The CRC-32C of each file above, computed from what was written, so a
  // flipped bit or an altered file is found before LibTorch or the safetensors
  // reader takes it (neither checks its contents). Checkpoints written before
  // it have none, and are checked by size only.
  std::map<std::string, std::uint32_t> file_crc32c;
};

inline constexpr const char* kWeightsFile = "model.safetensors";
inline constexpr const char* kTrainerStateFile = "trainer.pt";
inline constexpr const char* kRecipeFile = "recipe.toml";
inline constexpr const char* kMetaFile = "checkpoint.json";

// "step-00000300", or "step-00000300+3" in the middle of an update.
std::string checkpoint_name(std::int64_t step, std::int64_t micro_batch);

// (step, micro_batch) of a checkpoint directory's name, or nullopt when the
// name is not one checkpoint_name() makes.
std::optional<std::pair<std::int64_t, std::int64_t>> checkpoint_position(const std::string& name);

// checkpoint.json's text for `meta`.
std::string checkpoint_meta_json(const CheckpointMeta& meta);

// Parses and checks checkpoint.json's text, read from `directory`: the
// format, its version, each field's type and range, that file_bytes names
// only the checkpoint's own files, and that the position agrees with the
// directory's name. A hand-edited or damaged description is refused in one
// line that names the field and says to use an older checkpoint.
CheckpointMeta parse_checkpoint_meta(std::string_view text, const std::string& directory);

}  // namespace orchestrate

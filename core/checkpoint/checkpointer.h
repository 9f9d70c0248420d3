// Decides when a run saves a checkpoint, writes it, records it in the run
// store, and keeps only the newest [checkpoint] keep_max.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "checkpoint/checkpoint.h"
#include "engine/recipe/settings.h"
#include "store/run_recorder.h"
#include "store/run_records.h"

namespace orchestrate {


// <directory of the run store>/checkpoints/<store file>, or [checkpoint] dir when set.
std::string checkpoint_root(const CheckpointSettings& settings, const std::string& store_path);
// Where the runs of a store keep `name` ("checkpoints", "artifacts",
// "snapshots") by default: <the store's directory>/<name>/<store file name>.
// Run ids count per store, so two stores in one directory would otherwise
// write each other's run-1. Runs recorded before keep the paths they recorded.
std::string directory_beside_store(const std::string& store_path, const std::string& name);
// The run's own directory under a root (of checkpoints, of artifacts): run-<id>.
std::string run_directory_under(const std::string& root, std::int64_t run_id);

class Checkpointer {
 public:
  Checkpointer(const CheckpointSettings& settings, std::string directory, const RunRecorder& recorder);

  const std::string& directory() const { return directory_; }

  // The reason to save after update `step`, if any: "interval" (every_steps)
  // or "time" (save_interval_secs since the last save).
  std::optional<std::string> due_after_update(std::int64_t step) const;
  // The same, with the time rule decided elsewhere: a data-parallel job
  // takes rank 0's clock (agreed with the update), so every rank saves together.
  std::optional<std::string> due_after_update(std::int64_t step, bool time_due) const;
  bool due_by_time() const;
  // Whether every_epochs asks for a save after (1-based) `epoch`.
  bool due_after_epoch(std::int64_t epoch) const;
  // Whether a checkpoint of this exact position was already written.
  bool saved_at(std::int64_t step, std::int64_t micro_batch) const;

  // Writes the checkpoint and records it. A failure (disk full) is reported
  // on stderr and as an event, and training goes on: the previous
  // checkpoint is intact, since writes are atomic. Returns the path, or "".
  std::string save(CheckpointContent content);

  const std::string& newest() const { return newest_; }

 private:
  void prune();

  const CheckpointSettings settings_;
  const std::string directory_;
  const RunRecorder recorder_;
  std::chrono::steady_clock::time_point last_save_;
  std::int64_t last_step_ = -1, last_micro_ = -1;
  std::string newest_;
};

}  // namespace orchestrate

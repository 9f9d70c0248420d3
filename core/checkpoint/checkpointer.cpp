#include "checkpoint/checkpointer.h"

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "orchestrate/error.h"

namespace orchestrate {

namespace fs = std::filesystem;

std::string checkpoint_root(const CheckpointSettings& settings, const std::string& store_path) {
  return settings.dir.empty() ? directory_beside_store(store_path, "checkpoints") : settings.dir;
}

std::string directory_beside_store(const std::string& store_path, const std::string& name) {
  const fs::path store(store_path);
  const fs::path parent = store.parent_path();
  return ((parent.empty() ? fs::path(name) : parent / name) / store.filename()).string();
}

std::string run_directory_under(const std::string& root, std::int64_t run_id) {
  return (fs::path(root) / ("run-" + std::to_string(run_id))).string();
}

Checkpointer::Checkpointer(const CheckpointSettings& settings, std::string directory, const RunRecorder& recorder)
    : settings_(settings),
      directory_(std::move(directory)),
      recorder_(recorder),
      last_save_(std::chrono::steady_clock::now()) {
  fs::create_directories(directory_);
  remove_stale_staging(directory_);  // leftovers of a save a crash interrupted
}

std::optional<std::string> Checkpointer::due_after_update(std::int64_t step) const {
  return due_after_update(step, due_by_time());
}

std::optional<std::string> Checkpointer::due_after_update(std::int64_t step, bool time_due) const {
  if (settings_.every_steps > 0 && step % settings_.every_steps == 0) return "interval";
  if (time_due) return "time";
  return std::nullopt;
}

bool Checkpointer::due_by_time() const {
  return settings_.save_interval_secs > 0 &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - last_save_).count() >= settings_.save_interval_secs;
}

bool Checkpointer::due_after_epoch(std::int64_t epoch) const {
  return settings_.every_epochs > 0 && epoch % settings_.every_epochs == 0;
}

bool Checkpointer::saved_at(std::int64_t step, std::int64_t micro_batch) const {
  return step == last_step_ && micro_batch == last_micro_;
}

std::string Checkpointer::save(CheckpointContent content) {
  const auto start = std::chrono::steady_clock::now();
  const CheckpointMeta meta = content.meta;
  try {
    // Recorded before it is published (write_checkpoint's BeforePublish says why).
    const WrittenCheckpoint written =
        write_checkpoint(directory_, std::move(content), [&](const WrittenCheckpoint& staged) {
          CheckpointRecord record;
          record.step = meta.step;
          record.epoch = meta.epoch;
          record.path = staged.path;
          record.bytes = staged.bytes;
          record.reason = meta.reason;
          record.metrics = meta.metrics;
          recorder_.checkpoint(record);
        });
    last_step_ = meta.step;
    last_micro_ = meta.micro_batch;
    newest_ = written.path;
    last_save_ = std::chrono::steady_clock::now();
    std::ostringstream line;
    line << "checkpoint " << written.path << " (" << meta.reason << ", " << std::fixed << std::setprecision(1)
         << static_cast<double>(written.bytes) / 1e6 << " MB in "
         << std::chrono::duration<double>(last_save_ - start).count() << " s)";
    recorder_.event("checkpoint", line.str());
    prune();
    return written.path;
  } catch (const std::exception& e) {
    const std::string why = std::string("checkpoint at step ") + std::to_string(meta.step) + " not saved: " + e.what() +
                            "; training goes on, the previous checkpoint is intact";
    std::cerr << "orchestrate: " << why << "\n";
    try {
      recorder_.event("checkpoint_failed", why);
    } catch (const std::exception&) {
      // the store reports its own trouble; the run goes on
    }
    return "";
  }
}

void Checkpointer::prune() {
  if (settings_.keep_max <= 0) return;
  auto on_disk = checkpoints_in(directory_);
  while (on_disk.size() > static_cast<std::size_t>(settings_.keep_max)) {
    const std::string oldest = on_disk.front();
    on_disk.erase(on_disk.begin());
    remove_checkpoint(oldest);
    recorder_.forget_checkpoint(oldest);
  }
}

}  // namespace orchestrate
